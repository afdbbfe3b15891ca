/**
 * The human view of a deploy's answer, and of a rollback's, which is a deploy of a kept image: what is
 * served now (or would be, for a dry run), what the gate reported, what to know, and the history entry made.
 */
import type { DeployResult, GatedBreak } from '@berm/client';
import { renderReported } from './gate.js';
import { shortDigest } from './harness.js';
import { entryLine } from './history.js';
import type { Paint } from './paint.js';
import { printableDeep } from './printable.js';

/** What the first line says was done. */
export type Verb = (result: DeployResult) => string;

/** A deploy: new or replacing, done or (dry run) what would be. */
export const deployVerb: Verb = (r) => (r.dry_run ? (r.replaced ? 'would replace' : 'would deploy') : r.replaced ? 'replaced' : 'deployed');

/** A rollback: going back on a served name, or bringing back an undeployed one (bermd's 201). */
export const rollbackVerb: Verb = (r) =>
  r.dry_run ? (r.replaced ? 'would roll back' : 'would bring back') : r.replaced ? 'rolled back' : 'brought back';

/** The human view of a deploy: what was deployed, what was reported, what to know, the entry it made. */
export function renderDeploy(answer: DeployResult, paint: Paint, now: Date = new Date(), verb: Verb = deployVerb): string {
  // The daemon's answer quotes the image (its version, names, break messages) and is untrusted itself.
  const result = printableDeep(answer);
  const out: string[] = [];
  const dry = result.dry_run ? ` ${paint.dim('(dry run: nothing stored)')}` : '';
  out.push(
    `${paint.green(verb(result))} ${paint.bold(result.name)}${result.version ? ` ${result.version}` : ''} ${paint.dim(`(${shortDigest(result.digest)})`)}${dry}`,
  );
  out.push(`  tools:  ${result.tools.length > 0 ? result.tools.join(', ') : paint.dim('none')}`);
  out.push(`  events: ${result.events.length > 0 ? result.events.join(', ') : paint.dim('none')}`);
  if (result.reported.length > 0) out.push(renderReported(result.reported, paint, now));
  for (const notice of result.notices) out.push(`${paint.yellow('notice:')} ${notice.message}`);
  if (result.entry !== undefined) out.push(entryLine(result.entry, paint));
  return out.join('\n');
}

/**
 * A dry run's verdict of the compatibility gate, in one line: it passed with nothing broken, passed
 * with breaks no caller used lately, or passed only because `--force` goes past breaks callers used.
 */
export function gateVerdict(reported: readonly GatedBreak[], paint: Paint): string {
  const used = reported.filter((b) => b.used).length;
  const breaks = (n: number): string => `${n} break${n === 1 ? '' : 's'}`;
  if (used > 0)
    return `${paint.dim('gate:')} ${paint.yellow(`passes only with --force: ${breaks(used)} of tools or events callers used lately`)}`;
  if (reported.length > 0) return `${paint.dim('gate:')} passes: ${breaks(reported.length)}, of nothing callers used lately`;
  return `${paint.dim('gate:')} passes: nothing breaks`;
}
