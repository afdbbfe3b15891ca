/**
 * The daemon's core: the deployed set, kept in memory and in a store, with no transport. Deploy and
 * restore admit an image the same way (admission.ts); the compatibility gate (gate.ts) stands between a
 * deploy's checks and anything being prepared or stored.
 */
import type { Manifest } from '@berm/manifest';
import type { DeployResult, GrantSet, HarnessDetail, HarnessSummary, Limits, Notice } from '@berm/protocol';
import type { Logger } from 'pino';
import { assertHarnessName, BermdError } from '../errors.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { admit, type AdmissionPolicy, type CheckedHarness } from './admission.js';
import { isDefaultBindings, type BindingRequest, type Bindings } from './bindings.js';
import { DirectoryStore } from './directory-store.js';
import {
  breaksCallersError,
  DEFAULT_BREAKS_WINDOW_MS,
  emptyUsage,
  gateBreaks,
  usageOf,
  type GatedBreak,
  type UsageRecord,
} from './gate.js';
import type { HarnessMeta, HarnessStore } from './store.js';
import { reached } from '../faults.js';

/** How long a recorded use waits in memory before it is written, so a busy harness does not write on every call. */
const USAGE_FLUSH_MS = 5000;

/** A deployed harness as the daemon holds it: compiled once, at deploy or on restore. */
export interface Harness {
  name: string;
  digest: string;
  manifest: Manifest;
  module: WebAssembly.Module;
  deployedAt: string;
  lastUsedAt: string | null;
  used: UsageRecord;
  /** What the operator set at deploy (`{}`: the defaults). */
  bindings: Bindings;
  limits: Limits;
  grants: GrantSet;
}

export interface Use {
  tool?: string;
  event?: string;
}

/**
 * How the layers that run tools follow the deployed set. `prepare` runs after the checks and before
 * anything is stored (throwing a `BermdError` refuses the deploy, and nothing changes); `commit` runs
 * once the image is stored, with what `prepare` returned; `remove` once a harness is gone. On open,
 * each stored harness goes through `prepare` and `commit` too, and one `prepare` refuses is skipped.
 */
export interface DeployHooks<P = unknown> {
  prepare?(name: string, harness: CheckedHarness): P | Promise<P>;
  commit?(name: string, prepared: P): void;
  remove?(name: string): void;
}

export interface RegistryOptions {
  /** The state directory, where a `DirectoryStore` keeps the set unless `store` is given. */
  stateDir: string;
  /** Where the set is kept; a `DirectoryStore` under `stateDir` by default. */
  store?: HarnessStore;
  logger: Logger;
  /** Syscalls beyond the ABI's own that this daemon serves; none by default. */
  servedSyscalls?: Iterable<string>;
  /** The clock: deploy and use times, and the compatibility gate's "now". Replaceable so tests can set the time. */
  now?: () => Date;
  /** How recent a use of a tool or event must be for a break of it to refuse a redeploy; 30 days by default, 0 turns the gate off. */
  breaksWindowMs?: number;
  hooks?: DeployHooks;
  /** What is compiled in place of each image (see `CheckPolicy.rewrite`), given the harness's memory cap; the image itself by default. */
  rewriteImage?: (bytes: Uint8Array, maxMemoryBytes?: number) => Uint8Array;
  /** The daemon's limits: what a harness without its own gets, and the most a harness may be given. `DEFAULT_LIMITS` when unset. */
  bounds?: Limits;
  /** Whether the operator provides `secret` to calls that enter through `harness`; a deploy notes the granted secrets that are not. */
  secretAvailable?: (secret: string, harness: string) => boolean;
}

export interface DeployOptions {
  /** Replace even when the image breaks tools or events used within the window; every break is then reported. */
  force?: boolean;
  /** The operator's limits and grants for this deploy; without them, the defaults (see bindings.ts). */
  bindings?: BindingRequest;
  /** Run every check and the gate and answer as the deploy would, but store, serve and announce nothing. */
  dryRun?: boolean;
}

export interface SkippedHarness {
  name: string;
  code: string;
  message: string;
}

export type ChangeEvent = { kind: 'deployed'; name: string; replaced: boolean } | { kind: 'undeployed'; name: string };

/** The deployed set. Operations on one name run one after another; different names proceed concurrently. */
export class Registry {
  readonly store: HarnessStore;
  /** Stored harnesses that did not load on open, each logged and left out. */
  readonly skipped: SkippedHarness[] = [];
  private readonly harnesses = new Map<string, Harness>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly listeners = new Set<(event: ChangeEvent) => void>();
  private readonly unsavedUse = new Map<string, NodeJS.Timeout>();
  private readonly policy: AdmissionPolicy;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly hooks: DeployHooks;
  private readonly breaksWindowMs: number;
  private readonly secretAvailable?: (secret: string, harness: string) => boolean;
  private closing = false;

  private constructor(store: HarnessStore, options: RegistryOptions) {
    this.store = store;
    this.logger = options.logger;
    this.policy = {
      checks: { servedSyscalls: new Set(options.servedSyscalls ?? []), rewrite: options.rewriteImage },
      bounds: options.bounds ?? { ...DEFAULT_LIMITS },
    };
    this.now = options.now ?? (() => new Date());
    this.hooks = options.hooks ?? {};
    this.breaksWindowMs = options.breaksWindowMs ?? DEFAULT_BREAKS_WINDOW_MS;
    this.secretAvailable = options.secretAvailable;
  }

  /** Opens the store and restores every stored harness that still passes the deploy checks. */
  static async open(options: RegistryOptions): Promise<Registry> {
    const store = options.store ?? (await DirectoryStore.open(options.stateDir));
    const registry = new Registry(store, options);
    await registry.restore();
    return registry;
  }

  private async restore(): Promise<void> {
    for (const name of await this.store.sweep()) {
      this.logger.info({ harness: name }, 'removed metadata left by an interrupted undeploy');
    }
    for (const name of await this.store.names()) {
      try {
        const stored = await this.store.load(name);
        if (stored === null) continue;
        const kept = stored.meta.bindings?.[stored.digest] ?? {};
        // The daemon's limits may have been lowered since the deploy: they bound every harness's.
        const {
          harness: checked,
          bindings,
          clamped,
        } = await admit(stored.bytes, { limits: kept, grants: kept.grants }, this.policy, 'restore');
        if (clamped.length > 0)
          this.logger.warn({ harness: name, limits: clamped }, "the harness's own limits are above the daemon's now; the daemon's apply");
        const prepared = await this.hooks.prepare?.(name, checked);
        this.hooks.commit?.(name, prepared);
        this.harnesses.set(name, {
          name,
          digest: checked.digest,
          manifest: checked.manifest,
          module: checked.module,
          deployedAt: stored.meta.deployed_at,
          lastUsedAt: stored.meta.last_used_at,
          used: stored.meta.used,
          bindings,
          limits: checked.limits,
          grants: checked.grants,
        });
        if (stored.repaired)
          this.logger.warn({ harness: name, digest: checked.digest }, 'metadata did not match the stored image and was derived from it');
        this.logger.info({ harness: name, digest: checked.digest }, 'restored harness');
      } catch (e) {
        const code = e instanceof BermdError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'internal');
        const message = (e as Error).message;
        this.skipped.push({ name, code, message });
        this.logger.error({ harness: name, code, err: message }, 'stored harness no longer loads; skipped');
      }
    }
  }

  /** Checks, compiles and stores an image under `name`, replacing what was there. */
  async deploy(name: string, bytes: Uint8Array, options: DeployOptions = {}): Promise<DeployResult> {
    assertHarnessName(name);
    return this.serialised(name, async () => {
      reached('deploy-received');
      const { grants: grantSpecs, ...limits } = options.bindings ?? {};
      const { harness: checked, bindings } = await admit(bytes, { limits, grantSpecs }, this.policy, 'deploy');
      const previous = this.harnesses.get(name);
      // The gate runs before anything is prepared or stored, so a refusal leaves the harness as it was.
      let reported: GatedBreak[] = [];
      if (previous !== undefined) {
        const gate = gateBreaks(previous.manifest, checked.manifest, previous.used, this.now(), this.breaksWindowMs);
        if (gate.refusing.length > 0 && options.force !== true) throw breaksCallersError(name, gate, this.breaksWindowMs);
        if (gate.refusing.length > 0)
          this.logger.warn({ harness: name, breaks: gate.refusing.map((b) => b.code) }, 'forced a deploy that breaks recent callers');
        reported = gate.all;
      }
      const prepared = await this.hooks.prepare?.(name, checked);
      reached('deploy-prepared');
      const replaced = previous !== undefined;
      // A dry run stops here: every check and the gate have passed, and nothing is stored, committed or announced.
      if (options.dryRun === true) {
        this.logger.info({ harness: name, digest: checked.digest, replaced }, 'dry run of a deploy passed');
        const notices = this.notices(name, checked.manifest, checked.grants);
        return { ...deployResult(name, checked, reported, notices, replaced), dry_run: true, manifest: checked.manifest.data };
      }
      const deployedAt = this.now().toISOString();
      // Callers use a name, whichever image answers to it: usage carries over a replace.
      const lastUsedAt = previous?.lastUsedAt ?? null;
      const used = previous?.used ?? emptyUsage();
      const harness: Harness = {
        name,
        digest: checked.digest,
        manifest: checked.manifest,
        module: checked.module,
        deployedAt,
        lastUsedAt,
        used,
        bindings,
        limits: checked.limits,
        grants: checked.grants,
      };
      await this.store.save(name, bytes, metaOf(harness));
      this.harnesses.set(name, harness);
      this.hooks.commit?.(name, prepared);
      this.logger.info({ harness: name, digest: checked.digest, replaced }, 'deployed harness');
      this.emit({ kind: 'deployed', name, replaced });
      return deployResult(name, checked, reported, this.notices(name, checked.manifest, checked.grants), replaced);
    });
  }

  /** Removes a harness. */
  async undeploy(name: string): Promise<void> {
    assertHarnessName(name);
    return this.serialised(name, async () => {
      const known = this.harnesses.delete(name);
      clearTimeout(this.unsavedUse.get(name));
      this.unsavedUse.delete(name);
      const stored = await this.store.remove(name);
      if (!known && !stored) throw notFound(name);
      if (known) this.hooks.remove?.(name);
      this.logger.info({ harness: name }, 'undeployed harness');
      this.emit({ kind: 'undeployed', name });
    });
  }

  list(): HarnessSummary[] {
    return [...this.harnesses.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(summary);
  }

  get(name: string): HarnessDetail {
    assertHarnessName(name);
    const h = this.harnesses.get(name);
    if (h === undefined) throw notFound(name);
    return { ...summary(h), manifest: h.manifest.data, usage: usageOf(h.manifest, h.used) };
  }

  /** The compiled harness, for the layers that run tools. */
  harness(name: string): Harness | undefined {
    return this.harnesses.get(name);
  }

  has(name: string): boolean {
    return this.harnesses.has(name);
  }

  /** The stored image bytes, as deployed. */
  async image(name: string): Promise<Buffer> {
    assertHarnessName(name);
    if (!this.harnesses.has(name)) throw notFound(name);
    const bytes = await this.store.readImage(name);
    if (bytes === null) throw notFound(name);
    return bytes;
  }

  /**
   * Records that a tool of `name` ran (or an event was emitted), for `last_used_at` and for the
   * compatibility gate, which asks which tools and events were used lately. Kept in memory at once
   * and written within a few seconds, and on close.
   */
  recordUse(name: string, use: Use = {}, at: Date = this.now()): void {
    const h = this.harnesses.get(name);
    if (h === undefined) return;
    const iso = at.toISOString();
    if (h.lastUsedAt === null || iso > h.lastUsedAt) h.lastUsedAt = iso;
    if (use.tool !== undefined) stampLater(h.used.tools, use.tool, iso);
    if (use.event !== undefined) stampLater(h.used.events, use.event, iso);
    if (this.unsavedUse.has(name) || this.closing) return;
    const timer = setTimeout(() => void this.saveUse(name), USAGE_FLUSH_MS);
    timer.unref();
    this.unsavedUse.set(name, timer);
  }

  /** When each tool and event of `name` was used last. */
  usage(name: string): UsageRecord | undefined {
    const h = this.harnesses.get(name);
    return h === undefined ? undefined : { tools: { ...h.used.tools }, events: { ...h.used.events } };
  }

  private saveUse(name: string): Promise<void> {
    clearTimeout(this.unsavedUse.get(name));
    this.unsavedUse.delete(name);
    return this.serialised(
      name,
      async () => {
        const h = this.harnesses.get(name);
        if (h === undefined) return;
        await this.store.saveMeta(metaOf(h));
        reached('usage-written');
      },
      true,
    ).catch((e: unknown) => {
      this.logger.error({ harness: name, err: e }, 'could not write usage');
    });
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Refuses new operations and waits for those under way to finish. */
  async close(): Promise<void> {
    await Promise.all([...this.unsavedUse.keys()].map((name) => this.saveUse(name)));
    this.closing = true;
    while (this.queues.size > 0) await Promise.allSettled([...this.queues.values()]);
  }

  private notices(self: string, manifest: Manifest, grants: GrantSet): Notice[] {
    const notices: Notice[] = manifest.data.deps.programs
      .filter((program) => program !== self && !this.harnesses.has(program))
      .map((program) => ({
        code: 'program-not-deployed' as const,
        program,
        message: `program ${program} is declared in deps.programs but not deployed: calls to it will be refused until it is`,
      }));
    const available = this.secretAvailable;
    if (available !== undefined) {
      for (const secret of grants.secrets) {
        if (available(secret, self)) continue;
        notices.push({
          code: 'secret-not-provided',
          secret,
          message: `secret ${secret} is granted but not provided for calls that enter through ${self}: requests naming it will be refused (see --secrets)`,
        });
      }
    }
    return notices;
  }

  private emit(event: ChangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (e) {
        this.logger.error({ err: e }, 'change listener failed');
      }
    }
  }

  /** Runs `op` after every earlier operation on `name` has settled. */
  private serialised<T>(name: string, op: () => Promise<T>, evenWhenClosing = false): Promise<T> {
    if (this.closing && !evenWhenClosing) return Promise.reject(new BermdError('shutting-down', 'bermd is shutting down'));
    const previous = this.queues.get(name) ?? Promise.resolve();
    const run = previous.then(op, op);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return run;
  }
}

/** Calls finish out of order: a last use only ever moves later. */
function stampLater(record: Record<string, string>, key: string, iso: string): void {
  const was = record[key];
  if (was === undefined || iso > was) record[key] = iso;
}

function summary(h: Harness): HarnessSummary {
  return {
    name: h.name,
    digest: h.digest,
    version: h.manifest.data.version,
    tools: h.manifest.tools.map((t) => t.name),
    events: h.manifest.events.map((e) => e.name),
    deployed_at: h.deployedAt,
    last_used_at: h.lastUsedAt,
    limits: { ...h.limits },
    grants: { syscalls: structuredClone(h.grants.syscalls), secrets: [...h.grants.secrets] },
    bindings: structuredClone(h.bindings),
  };
}

/** A deploy's answer: what `checked` declares, with what the gate reported and the notices. */
function deployResult(name: string, checked: CheckedHarness, reported: GatedBreak[], notices: Notice[], replaced: boolean): DeployResult {
  const data = checked.manifest.data;
  return {
    name,
    digest: checked.digest,
    version: data.version,
    tools: data.tools.map((t) => t.name),
    events: data.events.map((e) => e.name),
    reported,
    notices,
    replaced,
  };
}

/** The metadata stored for `h`: its bindings recorded under its image's digest, unless they are the defaults. */
function metaOf(h: Harness): HarnessMeta {
  const meta: HarnessMeta = { name: h.name, digest: h.digest, deployed_at: h.deployedAt, last_used_at: h.lastUsedAt, used: h.used };
  if (!isDefaultBindings(h.bindings)) meta.bindings = { [h.digest]: h.bindings };
  return meta;
}

function notFound(name: string): BermdError {
  return new BermdError('not-found', `no harness named ${name} is deployed`, { name });
}
