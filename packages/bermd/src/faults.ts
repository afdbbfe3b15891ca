/**
 * A test-only seam: `BERMD_FAULT_AT=STEP` in bermd's environment makes the process kill itself with
 * SIGKILL when it reaches STEP, so the crash tests stop a deploy exactly where they mean to (each
 * step below) rather than wherever a signal from outside happens to land. A step is a point between
 * two writes that reach the disk (or the database); what a restart finds after each one is what the
 * store promises. The `store-` and `undeploy-image-` steps are the directory store's, the `pg-` steps the
 * PostgreSQL store's; `deploy-` and `usage-` steps are the registry's, reached whatever the store.
 *
 * `BERMD_FAULT_AT=STEP:throw` throws an `InjectedFault` at STEP instead, every time it is reached: a
 * failure of bermd's own in the middle of an operation, which the process survives, for the tests of
 * what it answers and logs then.
 *
 * Only `main` arms it, from the environment it was started with: nothing a request carries can reach
 * it. Unarmed (every real run), a step is one comparison.
 */
export const FAULT_STEPS = [
  /** A deploy's body is read and its name accepted; nothing is checked yet. */
  'deploy-received',
  /** The image passed every check and the gate, and the runtime prepared it; nothing is stored yet. */
  'deploy-prepared',
  /** A deploy with bindings wrote its first metadata: the old image's, holding the new image's bindings too. */
  'store-bindings-written',
  /** The new image is in a temp file, synced; the metadata is not. */
  'store-image-written',
  /** The new metadata is in a temp file too. */
  'store-meta-written',
  /** The image is renamed into place: the deploy's commit point. The metadata still names the old image. */
  'store-image-renamed',
  /** The metadata is renamed into place; the directory is not yet synced. */
  'store-meta-renamed',
  /** The directory is synced: the deploy is durable and not yet answered. */
  'store-synced',
  /** An undeploy kept the image it removes (under images/, its record written) and wrote its entry, pending, in the metadata; the image is not yet unlinked. */
  'undeploy-image-retained',
  /** An undeploy unlinked the image, its commit point; the metadata is still there. */
  'undeploy-image-removed',
  /** PostgreSQL: a deploy's row (image, digest, manifest, bindings, deploy time) is written, its transaction still open. */
  'pg-deploy-written',
  /** PostgreSQL: the deploy's transaction committed, its commit point (the other replicas are notified); not yet answered. */
  'pg-deploy-committed',
  /** PostgreSQL: an undeploy deleted the row (its usage with it), its transaction still open. */
  'pg-undeploy-deleted',
  /** PostgreSQL: the undeploy's transaction committed, its commit point; not yet answered. */
  'pg-undeploy-committed',
  /** Usage recorded since the last write (within 5 s of a call) was written. */
  'usage-written',
] as const;

export type FaultStep = (typeof FAULT_STEPS)[number];

/** The environment variable that arms the seam. */
export const FAULT_ENV = 'BERMD_FAULT_AT';

/** What the seam does at its step: kill the process (the default), or throw. */
export type FaultKind = 'kill' | 'throw';

export interface Fault {
  step: FaultStep;
  kind: FaultKind;
}

/** The error a `STEP:throw` fault throws, named so a test tells it from any other failure. */
export class InjectedFault extends Error {
  constructor(step: FaultStep) {
    super(`a fault injected at ${step} (${FAULT_ENV}=${step}:throw)`);
    this.name = 'InjectedFault';
  }
}

let armed: Fault | undefined;

/**
 * Arms the seam as `spec` says (`STEP` or `STEP:throw`); throws (and arms nothing) when its step is not
 * one of FAULT_STEPS or its kind is not `throw`, so a misspelt step never passes a test by never firing.
 */
export function armFault(spec: string): Fault {
  const [step, kind, ...rest] = spec.split(':');
  if (!(FAULT_STEPS as readonly string[]).includes(step!)) {
    throw new Error(`${FAULT_ENV}=${spec} names no step; the steps are ${FAULT_STEPS.join(', ')}`);
  }
  if ((kind !== undefined && kind !== 'throw') || rest.length > 0) {
    throw new Error(`${FAULT_ENV}=${spec}: after the step, only :throw may follow (kill the process is the default)`);
  }
  armed = { step: step as FaultStep, kind: kind === 'throw' ? 'throw' : 'kill' };
  return armed;
}

/** Kills this process, at once and without cleanup (or throws, armed so), when the seam is armed at `step`. */
export function reached(step: FaultStep): void {
  if (armed?.step !== step) return;
  if (armed.kind === 'throw') throw new InjectedFault(step);
  process.kill(process.pid, 'SIGKILL');
}
