/**
 * The daemon's core: the deployed set, kept in memory and in a store, with no transport. Deploy and
 * restore admit an image the same way (admission.ts); the compatibility gate (gate.ts) stands between a
 * deploy's checks and anything being prepared or stored.
 *
 * A deploy decides inside the store's transaction on its name: the gate compares the image with what the
 * store holds under the name when the hold is taken, not with this process's copy, so two deploys of one
 * name through two processes sharing a store each compare against what the other stored.
 *
 * With a store that other processes share (`HarnessStore.watch`), the registry follows what they do: a
 * change they make is installed here (compiled, prepared, committed) and announced through `onChange`
 * like one made here; a periodic reconciliation, and one after each reconnection, catches what a missed
 * notification would have told.
 */
import type { DeployPhase } from './checks.js';
import { hostname } from 'node:os';
import { Manifest } from '@berm/manifest';
import type {
  DeployResult,
  GrantSet,
  HarnessDetail,
  HarnessSummary,
  HistoryImage,
  Limits,
  Notice,
  RetainedImages,
  UndeployedHarness,
  DeploySource,
} from '@berm/protocol';
import { ASK_SYSCALLS } from '@berm/protocol';
import type { Logger } from 'pino';
import { assertHarnessName, BermdError } from '../errors.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { admit, type Admitted, type AdmissionPolicy, type CheckedHarness } from './admission.js';
import { isDefaultBindings, type BindingRequest, type Bindings } from './bindings.js';
import { DirectoryStore } from './directory-store.js';
import type { HistoryEntry, HistoryPage, HistoryQuery, RetainedImage } from './history.js';
import {
  breaksCallersError,
  DEFAULT_BREAKS_WINDOW_MS,
  emptyUsage,
  gateBreaks,
  laterUse,
  mergeUsage,
  usageOf,
  type GatedBreak,
  type UsageRecord,
} from './gate.js';
import { KeyedQueue } from './keyed-queue.js';
import type { HarnessMeta, HarnessStore, RetentionPolicy, StoredHarness, StoredHead, StoreTransaction } from './store.js';
import { reached } from '../faults.js';
import { numberDefault } from '../limits.js';

/** How long a recorded use waits in memory before it is written, so a busy harness does not write on every call. */
const USAGE_FLUSH_MS = 5000;

/** How many stored harnesses a restore reads and compiles at once. */
const RESTORE_CONCURRENCY = 8;

/** How often the store's retention policy is applied to names nobody writes: retention is in days, so hourly is prompt enough. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/** How often a registry on a shared store compares its set with the store's, for notifications it missed (`--reconcile-interval`). */
export const DEFAULT_RECONCILE_INTERVAL_MS = numberDefault('reconcile-interval');

/** A deployed harness as the daemon holds it: compiled once, at deploy or on restore. */
export interface Harness {
  name: string;
  digest: string;
  manifest: Manifest;
  module: WebAssembly.Module;
  deployedAt: string;
  /** The principal whose deploy this is; null when the store does not know (see `HarnessMeta.deployed_by`). */
  deployedBy: string | null;
  /** The registry reference and manifest digest its deploy said the image came from; undefined for a file sent as is. */
  source?: DeploySource;
  lastUsedAt: string | null;
  used: UsageRecord;
  /** What the operator set at deploy (`{}`: the defaults). */
  bindings: Bindings;
  limits: Limits;
  grants: GrantSet;
  /** The store's revision of this deploy: what tells this copy from a later deploy made elsewhere. */
  revision: string;
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
  /** `restored`: the image was admitted before (a restore, a change followed from elsewhere, a rollback), so what compiled then may compile on first use. */
  prepare?(name: string, harness: CheckedHarness, restored: boolean): P | Promise<P>;
  commit?(name: string, prepared: P): void;
  remove?(name: string): void;
}

export interface RegistryOptions {
  /** The state directory, where a `DirectoryStore` keeps the set unless `store` is given. */
  stateDir: string;
  /** What that `DirectoryStore` keeps of what each name served before (a given `store` has its own); `DEFAULT_RETENTION` when unset. */
  retention?: Partial<RetentionPolicy>;
  /** Where the set is kept; a `DirectoryStore` under `stateDir` by default. */
  store?: HarnessStore;
  logger: Logger;
  /** Syscalls beyond the ABI's own that this daemon serves; none by default. */
  servedSyscalls?: Iterable<string>;
  /** `--require-effects`: refuse a deploy that reaches outside with tools whose effect is undeclared. */
  requireEffects?: boolean;
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
  /** How this process names itself in history entries; `replicaName()` (the host name and the pid) when unset. */
  replica?: string;
  /** With a shared store, how often the set is compared with the store's; `DEFAULT_RECONCILE_INTERVAL_MS` when unset, 0 never. */
  reconcileIntervalMs?: number;
  /** Told of each change made through this registry and each refusal of the gate (the daemon's metrics). */
  counters?: RegistryCounters;
}

/** What the registry tells as it decides: a change it committed, a deploy or rollback the gate refused. */
export interface RegistryCounters {
  changed(action: 'deploy' | 'undeploy' | 'rollback'): void;
  gateRefused(action: 'deploy' | 'rollback'): void;
}

/** The store's health as the registry knows it, without asking the store anything. */
export interface StoreHealth {
  kind: 'directory' | 'postgres';
  /** Whether the store answers, as far as its connections tell (a directory always does). */
  reachable: boolean;
  /** With a shared store, seconds since the set was last compared with it; undefined before the first comparison or without one. */
  sinceReconcileSeconds?: number;
}

export interface DeployOptions {
  /** Replace even when the image breaks tools or events used within the window; every break is then reported. */
  force?: boolean;
  /** The operator's limits and grants for this deploy; without them, the defaults (see bindings.ts). */
  bindings?: BindingRequest;
  /** Run every check and the gate and answer as the deploy would, but store, serve and announce nothing. */
  dryRun?: boolean;
  /** The name of the principal deploying: stored with the harness and named in the log; unknown when unset. */
  by?: string;
  /** The registry reference and manifest digest the image came from, as the deploy says: stored with the harness and its entry. */
  source?: DeploySource;
  /** Runs each phase of this deploy (read, compile, checks, gate, commit) as a span of the request's trace; unset, they just run. */
  phase?: DeployPhase;
  /** Writes this deploy's log lines (the request's logger, carrying its trace's ids); the registry's own when unset. */
  logger?: Pick<Logger, 'info' | 'warn'>;
}

export interface RollbackOptions extends Omit<DeployOptions, 'bindings'> {
  /** The retained image to go back to, by digest. */
  to?: string;
  /** How many retained images back (1: the one served before this one); 1 when neither this nor `to` is given. */
  steps?: number;
}

/** How a deploy runs its phases: as it says, or just run. */
function phaseOf(options: DeployOptions): DeployPhase {
  return options.phase ?? (async (_name, fn) => fn());
}

/** What a deploy or rollback decided inside its transaction. */
type ReplaceOutcome = {
  checked: CheckedHarness;
  reported: GatedBreak[];
  notices: Notice[];
  replaced: boolean;
} & ({ dryRun: true } | { dryRun: false; harness: Harness; prepared: unknown; entry: HistoryEntry });

export interface UndeployOptions {
  /** The name of the principal undeploying, for the log. */
  by?: string;
}

export interface SkippedHarness {
  name: string;
  code: string;
  message: string;
}

/** A change of the deployed set; `elsewhere` when another process sharing the store made it and this one followed. */
export type ChangeEvent =
  | { kind: 'deployed'; name: string; replaced: boolean; elsewhere?: boolean }
  | { kind: 'undeployed'; name: string; elsewhere?: boolean };

/** The deployed set. Operations on one name run one after another; different names proceed concurrently. */
export class Registry {
  readonly store: HarnessStore;
  /** Stored harnesses that did not load on open, each logged and left out. */
  readonly skipped: SkippedHarness[] = [];
  private readonly harnesses = new Map<string, Harness>();
  private readonly queue = new KeyedQueue();
  private readonly listeners = new Set<(event: ChangeEvent) => void>();
  private readonly unsavedUse = new Map<string, NodeJS.Timeout>();
  /** Names whose usage could not be written, so a store out of reach is logged once per name, not every few seconds. */
  private readonly usageUnwritten = new Set<string>();
  /** Revisions of a shared store that do not load here (logged once), by name: not tried again until the name changes. */
  private readonly refused = new Map<string, string>();
  private readonly policy: AdmissionPolicy;
  private readonly logger: Logger;
  private readonly now: () => Date;
  /** How this process names itself: history entries and receipts carry it. */
  readonly replica: string;
  /** The last use's time, and its ISO form (see `recordUse`). */
  private lastUseMs = Number.NaN;
  private lastUseIso = '';
  private readonly hooks: DeployHooks;
  private readonly breaksWindowMs: number;
  private readonly secretAvailable?: (secret: string, harness: string) => boolean;
  private closing = false;
  private stopWatching?: () => void;
  private reconcileTimer?: NodeJS.Timeout;
  /** When the set was last compared with a shared store's (performance.now()). */
  private reconciledAt?: number;
  private readonly counters?: RegistryCounters;
  private pruneTimer?: NodeJS.Timeout;
  /** The prune under way, which `close` waits for before it closes the store. */
  private pruning?: Promise<void>;
  private reconciling?: Promise<void>;
  private reconcileAgain = false;

  private constructor(store: HarnessStore, options: RegistryOptions) {
    this.store = store;
    this.logger = options.logger;
    this.policy = {
      checks: {
        servedSyscalls: new Set([...ASK_SYSCALLS, ...(options.servedSyscalls ?? [])]),
        rewrite: options.rewriteImage,
      },
      bounds: options.bounds ?? { ...DEFAULT_LIMITS },
      requireEffects: options.requireEffects,
    };
    this.now = options.now ?? (() => new Date());
    this.replica = options.replica ?? replicaName();
    this.hooks = options.hooks ?? {};
    this.breaksWindowMs = options.breaksWindowMs ?? DEFAULT_BREAKS_WINDOW_MS;
    this.counters = options.counters;
    this.secretAvailable = options.secretAvailable;
  }

  /** Opens the store and restores every stored harness that still passes the deploy checks; then follows a shared store. */
  static async open(options: RegistryOptions): Promise<Registry> {
    const store = options.store ?? (await DirectoryStore.open(options.stateDir, options.retention));
    const registry = new Registry(store, options);
    await registry.restore();
    await registry.prune();
    registry.watch(options.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS);
    return registry;
  }

  /**
   * Applies the store's retention policy to names nobody writes any more (a write prunes its own name),
   * now and every PRUNE_INTERVAL_MS, so what is kept stays bounded without a job of the operator's.
   */
  private async prune(): Promise<void> {
    const run = async () => {
      try {
        for (const name of await this.store.prune())
          this.logger.info({ harness: name }, 'forgot an undeployed harness past the history retention');
        const receipts = await this.store.receipts?.prune();
        if (receipts !== undefined && receipts > 0) this.logger.debug({ receipts }, 'forgot receipts past the receipt retention');
      } catch (e) {
        this.logger.warn({ err: (e as Error).message }, 'could not prune the deploy history; trying again later');
      }
    };
    await run();
    this.pruneTimer = setInterval(() => {
      if (this.pruning === undefined) this.pruning = run().finally(() => (this.pruning = undefined));
    }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  private async restore(): Promise<void> {
    for (const name of await this.store.sweep()) {
      this.logger.info({ harness: name }, 'removed metadata left by an interrupted undeploy');
    }
    const names = await this.store.names();
    let next = 0;
    const restoreNext = async (): Promise<void> => {
      for (let i = next++; i < names.length; i = next++) await this.restoreOne(names[i]!);
    };
    // A few at once: each is a read of the store and a compile on V8's background threads, both waits
    // that one name at a time leaves idle; the rest (checks, preparation) is the main thread's, in turn.
    await Promise.all(Array.from({ length: Math.min(RESTORE_CONCURRENCY, names.length) }, restoreNext));
    // In the store's order of names, whichever finished first.
    this.skipped.sort((a, b) => names.indexOf(a.name) - names.indexOf(b.name));
  }

  /** Restores one stored harness; one that does not load is logged, noted in `skipped` and left out. */
  private async restoreOne(name: string): Promise<void> {
    let stored: StoredHarness | null = null;
    try {
      stored = await this.store.load(name);
      if (stored === null) return;
      await this.install(stored);
      if (stored.repaired)
        this.logger.warn({ harness: name, digest: stored.digest }, 'metadata did not match the stored image and was derived from it');
      this.logger.info({ harness: name, digest: stored.digest }, 'restored harness');
    } catch (e) {
      const code = e instanceof BermdError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'internal');
      const message = (e as Error).message;
      this.skipped.push({ name, code, message });
      if (stored !== null) this.refused.set(name, stored.revision);
      this.logger.error({ harness: name, code, err: message }, 'stored harness no longer loads; skipped');
    }
  }

  /**
   * Admits a stored harness as a restore does (the daemon's limits may have been lowered since its deploy:
   * they bound every harness's), prepares and commits it. Throws what refuses it, the set left as it was.
   */
  private async install(stored: StoredHarness): Promise<Harness> {
    const { name } = stored;
    const kept = stored.meta.bindings?.[stored.digest] ?? {};
    const {
      harness: checked,
      bindings,
      clamped,
    } = await admit(stored.bytes, { limits: kept, grants: kept.grants }, this.policy, 'restore');
    if (clamped.length > 0)
      this.logger.warn({ harness: name, limits: clamped }, "the harness's own limits are above the daemon's now; the daemon's apply");
    const prepared = await this.hooks.prepare?.(name, checked, true);
    this.hooks.commit?.(name, prepared);
    const harness: Harness = {
      name,
      digest: checked.digest,
      manifest: checked.manifest,
      module: checked.module,
      deployedAt: stored.meta.deployed_at,
      deployedBy: stored.meta.deployed_by ?? null,
      source: stored.meta.source,
      lastUsedAt: stored.meta.last_used_at,
      used: stored.meta.used,
      bindings,
      limits: checked.limits,
      grants: checked.grants,
      revision: stored.revision,
    };
    this.harnesses.set(name, harness);
    this.refused.delete(name);
    return harness;
  }

  /** The admission policy of one deploy: the registry's, its phases run as that deploy says. */
  private policyFor(options: DeployOptions): AdmissionPolicy {
    return options.phase === undefined ? this.policy : { ...this.policy, checks: { ...this.policy.checks, phase: options.phase } };
  }

  /** Checks, compiles and stores an image under `name`, replacing what was there. */
  async deploy(name: string, bytes: Uint8Array, options: DeployOptions = {}): Promise<DeployResult> {
    assertHarnessName(name);
    return this.serialised(name, async () => {
      reached('deploy-received');
      const { grants: grantSpecs, ...limits } = options.bindings ?? {};
      const admitted = await admit(bytes, { limits, grantSpecs }, this.policyFor(options), 'deploy');
      const outcome = await this.store.transaction(name, (tx) => this.replaceWithin(name, tx, admitted, 'deploy', options));
      return this.settleReplace(name, outcome, options);
    });
  }

  /**
   * Deploys again an image the store keeps for `name` (`options.to`, or `options.steps` back, one by
   * default), with the bindings it was deployed with. It is a deploy in every other way: the image's
   * checks, the compatibility gate against what is served now (going back can break callers of what the
   * newer image added), `force`, `dryRun`, and a history entry of its own. On an undeployed name it brings
   * back the image served last. The target is chosen inside the name's transaction, so two rollbacks
   * through two processes go one after the other, the second from where the first left the name.
   */
  async rollback(name: string, options: RollbackOptions = {}): Promise<DeployResult> {
    assertHarnessName(name);
    return this.serialised(name, async () => {
      reached('deploy-received');
      const outcome = await this.store.transaction(name, async (tx) => {
        const target = await rollbackTarget(name, tx, options);
        const bytes = await tx.readRetained(target.digest);
        if (bytes === null) throw notRetained(name, `its image ${target.digest} is no longer kept`);
        // Bindings kept with an image are the operator's earlier choice: the daemon's limits, lowered since, bound them as on a restart.
        const admitted = await admit(
          bytes,
          { limits: target.bindings, grants: target.bindings.grants },
          this.policyFor(options),
          'restore',
        );
        if (admitted.clamped.length > 0)
          (options.logger ?? this.logger).warn(
            { harness: name, limits: admitted.clamped },
            "the retained image's limits are above the daemon's now; the daemon's apply",
          );
        // The image is the one its source named when it was deployed, so the rollback says where it came from as that deploy did.
        return this.replaceWithin(name, tx, admitted, 'rollback', { ...options, source: target.source });
      });
      return this.settleReplace(name, outcome, options);
    });
  }

  /**
   * The part of a deploy or rollback inside the name's transaction: the gate against what the store holds
   * now (before anything is prepared or stored, so a refusal leaves the harness as it was), preparation,
   * and the write with its history entry.
   */
  private async replaceWithin(
    name: string,
    tx: StoreTransaction,
    { harness: checked, bindings }: Admitted,
    action: 'deploy' | 'rollback',
    options: DeployOptions,
  ): Promise<ReplaceOutcome> {
    const { current } = tx;
    const held = this.harnesses.get(name);
    // Callers use a name, whichever image answers to it: usage carries over a replace. The store has
    // every process's written uses; this process's copy may hold some not yet written.
    const used = current === null ? emptyUsage() : mergeUsage(mergeUsage(emptyUsage(), current.used), held?.used ?? emptyUsage());
    const lastUsedAt = current === null ? null : laterUse(current.last_used_at, held?.lastUsedAt);
    let reported: GatedBreak[] = [];
    let forcedPast: GatedBreak[] = [];
    // An image stored under the name whose manifest does not read was never served: nothing to compare, nothing replaced.
    const previous = current === null ? null : held?.digest === current.digest ? held.manifest : await this.storedManifest(name, tx);
    if (previous !== null) {
      const gate = await phaseOf(options)('gate', () => gateBreaks(previous, checked.manifest, used, this.now(), this.breaksWindowMs));
      if (gate.refusing.length > 0 && options.force !== true) {
        this.counters?.gateRefused(action);
        throw breaksCallersError(name, gate, this.breaksWindowMs, action);
      }
      if (gate.refusing.length > 0)
        (options.logger ?? this.logger).warn(
          { harness: name, principal: options.by, action, breaks: gate.refusing.map((b) => b.code) },
          `forced a ${action} that breaks recent callers`,
        );
      reported = gate.all;
      forcedPast = gate.refusing;
    }
    const prepared = await this.hooks.prepare?.(name, checked, action === 'rollback');
    reached('deploy-prepared');
    const replaced = previous !== null;
    const notices = this.notices(name, checked.manifest, checked.grants);
    // A dry run stops here: every check and the gate (against what the store holds now) have passed, and
    // nothing is stored, committed or announced.
    if (options.dryRun === true) return { checked, dryRun: true, reported, notices, replaced };
    const harness: Harness = {
      name,
      digest: checked.digest,
      manifest: checked.manifest,
      module: checked.module,
      deployedAt: this.now().toISOString(),
      deployedBy: options.by ?? null,
      source: options.source,
      lastUsedAt,
      used,
      bindings,
      limits: checked.limits,
      grants: checked.grants,
      revision: '',
    };
    const entry: HistoryEntry = {
      action,
      at: harness.deployedAt,
      principal: harness.deployedBy,
      replica: this.replica,
      from: current === null ? null : { digest: current.digest, version: previous?.data.version ?? null },
      to: { digest: checked.digest, version: checked.manifest.data.version },
      forced: options.force === true,
      forced_past: forcedPast,
      reported,
      notices,
      ...(options.source === undefined ? {} : { source: options.source }),
    };
    harness.revision = await phaseOf(options)('commit', () => tx.save(checked.bytes, metaOf(harness), checked.manifest.data, entry));
    return { checked, dryRun: false, harness, prepared, reported, notices, replaced, entry };
  }

  /** After the transaction: a dry run's answer, or the harness served here from now on, announced. */
  private settleReplace(name: string, outcome: ReplaceOutcome, options: DeployOptions): DeployResult {
    const { checked } = outcome;
    const result = deployResult(name, checked, outcome.reported, outcome.notices, outcome.replaced);
    const action = outcome.dryRun || outcome.entry.action === 'deploy' ? 'deploy' : 'rollback';
    const logger = options.logger ?? this.logger;
    if (outcome.dryRun) {
      logger.info(
        { harness: name, digest: checked.digest, replaced: outcome.replaced, principal: options.by },
        `dry run of a ${action} passed`,
      );
      return { ...result, dry_run: true, manifest: checked.manifest.data };
    }
    const { harness, prepared, replaced, entry } = outcome;
    // Committed to the store: only now does this process serve it.
    this.harnesses.set(name, harness);
    this.refused.delete(name);
    this.hooks.commit?.(name, prepared);
    logger.info(
      { harness: name, digest: checked.digest, replaced, principal: options.by },
      entry.action === 'rollback' ? 'rolled back harness' : 'deployed harness',
    );
    this.counters?.changed(entry.action === 'rollback' ? 'rollback' : 'deploy');
    this.emit({ kind: 'deployed', name, replaced });
    return { ...result, entry };
  }

  /** `name`'s history, newest first (see `HarnessStore.history`): kept past an undeploy, so no `not-found` here. */
  async history(name: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    assertHarnessName(name);
    return this.store.history(name, query);
  }

  /** What a rollback of `name` can go back to; `not-found` for a name with neither an image served nor one kept. */
  async retained(name: string): Promise<RetainedImages> {
    assertHarnessName(name);
    const [head, retained] = await Promise.all([this.store.head(name), this.store.retained(name)]);
    if (head === null && retained.length === 0) throw notFound(name);
    const held = this.harnesses.get(name);
    let current: HistoryImage | null = null;
    if (head !== null) {
      const version = held?.digest === head.digest ? held.manifest.data.version : await this.versionOf(name, head.digest);
      current = { digest: head.digest, version };
    }
    return { name, current, retained };
  }

  /** An image the store keeps for `name`, the served one's included: `not-retained` when it keeps none of that digest. */
  async retainedImage(name: string, digest: string): Promise<Buffer> {
    assertHarnessName(name);
    const bytes = await this.store.readRetained(name, digest);
    if (bytes === null) throw notRetained(name, `it keeps no image ${digest}`);
    return bytes;
  }

  /** Names undeployed within the history's retention, newest first, each with the image a rollback would bring back. */
  async undeployed(): Promise<UndeployedHarness[]> {
    const names = await this.store.undeployed();
    return Promise.all(
      names.map(async ({ name, entry }) => {
        const last = (await this.store.retained(name))[0];
        return {
          name,
          undeployed_at: entry.at,
          undeployed_by: entry.principal,
          last: last === undefined ? null : { digest: last.digest, version: last.version },
        };
      }),
    );
  }

  /** Removes a harness. */
  async undeploy(name: string, options: UndeployOptions = {}): Promise<void> {
    assertHarnessName(name);
    return this.serialised(name, async () => {
      const stored = await this.store.transaction(name, async (tx) => {
        const { current } = tx;
        const held = this.harnesses.get(name);
        const manifest = current === null ? null : held?.digest === current.digest ? held.manifest : await this.storedManifest(name, tx);
        return tx.remove({
          action: 'undeploy',
          at: this.now().toISOString(),
          principal: options.by ?? null,
          replica: this.replica,
          from: current === null ? null : { digest: current.digest, version: manifest?.data.version ?? null },
          to: null,
          forced: false,
          forced_past: [],
          reported: [],
          notices: [],
        });
      });
      const known = this.drop(name);
      if (!known && !stored) throw notFound(name);
      this.logger.info({ harness: name, principal: options.by }, 'undeployed harness');
      this.counters?.changed('undeploy');
      this.emit({ kind: 'undeployed', name });
    });
  }

  /** Lets go of `name` here (the store has let go of it); true when it was held. */
  private drop(name: string): boolean {
    const known = this.harnesses.delete(name);
    clearTimeout(this.unsavedUse.get(name));
    this.unsavedUse.delete(name);
    if (known) this.hooks.remove?.(name);
    return known;
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
   * and written within a few seconds, and on close: nothing is written on the call's path.
   */
  recordUse(name: string, use: Use = {}, at: Date = this.now()): void {
    const h = this.harnesses.get(name);
    if (h === undefined) return;
    // Calls in the same millisecond share one ISO string: toISOString is a measurable part of every tools/call.
    const ms = at.getTime();
    if (ms !== this.lastUseMs) {
      this.lastUseMs = ms;
      this.lastUseIso = at.toISOString();
    }
    const iso = this.lastUseIso;
    h.lastUsedAt = laterUse(h.lastUsedAt, iso);
    if (use.tool !== undefined) h.used.tools[use.tool] = laterUse(h.used.tools[use.tool], iso)!;
    if (use.event !== undefined) h.used.events[use.event] = laterUse(h.used.events[use.event], iso)!;
    this.scheduleUsage(name);
  }

  /** When each tool and event of `name` was used last. */
  usage(name: string): UsageRecord | undefined {
    const h = this.harnesses.get(name);
    return h === undefined ? undefined : { tools: { ...h.used.tools }, events: { ...h.used.events } };
  }

  private scheduleUsage(name: string): void {
    if (this.unsavedUse.has(name) || this.closing) return;
    const timer = setTimeout(() => void this.saveUse(name), USAGE_FLUSH_MS);
    timer.unref();
    this.unsavedUse.set(name, timer);
  }

  private saveUse(name: string): Promise<void> {
    clearTimeout(this.unsavedUse.get(name));
    this.unsavedUse.delete(name);
    return this.serialised(
      name,
      async () => {
        const h = this.harnesses.get(name);
        if (h === undefined) return;
        await this.store.saveUsage(name, h.used, h.lastUsedAt);
        reached('usage-written');
        if (this.usageUnwritten.delete(name)) this.logger.info({ harness: name }, 'usage written again');
      },
      true,
    ).catch((e: unknown) => {
      // Either way the uses stay in memory, where the gate here still sees them.
      const first = !this.usageUnwritten.has(name);
      this.usageUnwritten.add(name);
      const code = e instanceof BermdError ? e.code : ((e as { code?: unknown } | null)?.code ?? 'internal');
      const reason = e instanceof Error ? e.message : String(e);
      if (code === 'store-unavailable') {
        // Written once the store answers again.
        this.logger[first ? 'warn' : 'debug']({ harness: name, code, err: reason }, 'could not write usage; kept, and tried again');
        this.scheduleUsage(name);
        return;
      }
      // The store answered and refused the write: the same rows would be refused every few seconds,
      // forever. They go with the write the next use of the name makes, or the one at close.
      this.logger[first ? 'error' : 'debug'](
        { harness: name, code, err: reason },
        'could not write usage, the store refused it; kept, and written with the next use',
      );
    });
  }

  /** The store's health, from what the store and this registry already know: no statement is sent. */
  storeHealth(): StoreHealth {
    const shared = this.store.watch !== undefined;
    const health: StoreHealth = { kind: shared ? 'postgres' : 'directory', reachable: this.store.reachable?.() ?? true };
    if (shared && this.reconciledAt !== undefined) health.sinceReconcileSeconds = (performance.now() - this.reconciledAt) / 1000;
    return health;
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Compares the set with the store's and follows every name that differs: what another process
   * deployed is installed, what it undeployed dropped, and uses written elsewhere are taken in. One runs
   * at a time; a call while one runs makes it run once more.
   */
  reconcile(): Promise<void> {
    if (this.reconciling !== undefined) {
      this.reconcileAgain = true;
      return this.reconciling;
    }
    const run = async (): Promise<void> => {
      do {
        this.reconcileAgain = false;
        await this.reconcileOnce();
      } while (this.reconcileAgain && !this.closing);
    };
    this.reconciling = run().finally(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  private async reconcileOnce(): Promise<void> {
    let heads: StoredHead[];
    try {
      heads = await this.store.heads();
    } catch (e) {
      this.logger.warn({ code: (e as BermdError).code, err: (e as Error).message }, 'could not compare the deployed set with the store');
      return;
    }
    this.reconciledAt = performance.now();
    const differing: string[] = [];
    const stored = new Set<string>();
    for (const head of heads) {
      stored.add(head.name);
      const held = this.harnesses.get(head.name);
      if (held !== undefined && held.revision === head.revision) takeUsage(held, head);
      else if (this.refused.get(head.name) !== head.revision) differing.push(head.name);
    }
    for (const name of this.harnesses.keys()) if (!stored.has(name)) differing.push(name);
    await Promise.all(differing.map((name) => this.follow(name)));
  }

  /** Follows the store's change of `name`, logging what keeps it from it. */
  private follow(name: string): Promise<void> {
    return this.converge(name).catch((e: unknown) => {
      if (this.closing) return;
      this.logger.warn(
        { harness: name, code: (e as BermdError).code, err: (e as Error).message },
        'could not follow a change made elsewhere; the next reconciliation tries again',
      );
    });
  }

  /** Brings `name` in line with the store: installs what another process deployed, drops what it undeployed. */
  private converge(name: string): Promise<void> {
    return this.serialised(name, async () => {
      const head = await this.store.head(name);
      const held = this.harnesses.get(name);
      if (head !== null && held?.revision === head.revision) {
        takeUsage(held, head);
        return;
      }
      if (head !== null && this.refused.get(name) === head.revision) return;
      const stored = head === null ? null : await this.store.load(name);
      if (stored === null) {
        this.refused.delete(name);
        if (!this.drop(name)) return;
        this.logger.info({ harness: name }, 'undeployed harness (elsewhere)');
        this.emit({ kind: 'undeployed', name, elsewhere: true });
        return;
      }
      let harness: Harness;
      try {
        harness = await this.install(stored);
      } catch (e) {
        if (e instanceof BermdError && e.code === 'store-unavailable') throw e;
        // Serving the old image under a name the store gives another would answer for what is no longer deployed.
        this.refused.set(name, stored.revision);
        const code = e instanceof BermdError ? e.code : 'internal';
        this.logger.error(
          { harness: name, digest: stored.digest, code, err: (e as Error).message },
          'a harness deployed elsewhere does not load here; not served',
        );
        if (this.drop(name)) this.emit({ kind: 'undeployed', name, elsewhere: true });
        return;
      }
      // Uses made here and not yet written belong to the name: they carry over.
      if (held !== undefined) takeUsage(harness, { used: held.used, last_used_at: held.lastUsedAt });
      // Who deployed it is what the store recorded; an undeploy elsewhere leaves no record to say who.
      this.logger.info(
        { harness: name, digest: harness.digest, replaced: held !== undefined, principal: harness.deployedBy ?? undefined },
        'deployed harness (elsewhere)',
      );
      this.emit({ kind: 'deployed', name, replaced: held !== undefined, elsewhere: true });
    });
  }

  /** The version of the image stored under `name` when this process does not serve it; null when its manifest does not read. */
  private async versionOf(name: string, digest: string): Promise<string | null> {
    const bytes = await this.store.readRetained(name, digest);
    try {
      return bytes === null ? null : Manifest.fromImage(bytes).data.version;
    } catch {
      return null;
    }
  }

  /** The manifest of the image a transaction found stored, read without compiling it (this process has not); null when it does not read. */
  private async storedManifest(name: string, tx: StoreTransaction): Promise<Manifest | null> {
    const bytes = await tx.readImage();
    try {
      return bytes === null ? null : Manifest.fromImage(bytes);
    } catch (e) {
      this.logger.warn(
        { harness: name, err: (e as Error).message },
        "the stored image's manifest does not read; the deploy replaces it without comparing",
      );
      return null;
    }
  }

  /** Watches a shared store (and compares with it every `intervalMs`); nothing for a store one process keeps. */
  private watch(intervalMs: number): void {
    if (this.store.watch === undefined) return;
    this.stopWatching = this.store.watch({
      harnessChanged: (name) => void this.follow(name),
      // Read from the store (follow reads the head, its uses included), whoever sent the notification.
      usageChanged: (name) => {
        if (this.harnesses.has(name)) void this.follow(name);
      },
      resync: () => void this.reconcile(),
    });
    if (intervalMs > 0) {
      this.reconcileTimer = setInterval(() => void this.reconcile(), intervalMs);
      this.reconcileTimer.unref();
    }
  }

  /** Refuses new operations, writes pending usage and waits for operations under way to finish; then closes the store. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.stopWatching?.();
    clearInterval(this.reconcileTimer);
    clearInterval(this.pruneTimer);
    await this.pruning;
    // Names whose last write was refused get one more try.
    const unwritten = new Set([...this.unsavedUse.keys(), ...this.usageUnwritten]);
    await Promise.all([...unwritten].map((name) => this.saveUse(name)));
    await this.reconciling;
    await this.queue.drain();
    await this.store.close();
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
    return this.queue.run(name, op);
  }
}

/**
 * How a process names itself in history by default: the host name tells replicas on different machines
 * apart, the pid those on one machine (and a restart from what ran before).
 */
export function replicaName(): string {
  return `${hostname()}/${process.pid}`;
}

/** Takes in uses written elsewhere: a use only ever moves later. */
function takeUsage(h: Harness, from: { used: UsageRecord; last_used_at: string | null }): void {
  mergeUsage(h.used, from.used);
  h.lastUsedAt = laterUse(h.lastUsedAt, from.last_used_at);
}

function summary(h: Harness): HarnessSummary {
  return {
    name: h.name,
    digest: h.digest,
    version: h.manifest.data.version,
    tools: h.manifest.tools.map((t) => t.name),
    events: h.manifest.events.map((e) => e.name),
    deployed_at: h.deployedAt,
    deployed_by: h.deployedBy,
    last_used_at: h.lastUsedAt,
    limits: { ...h.limits },
    grants: { syscalls: structuredClone(h.grants.syscalls), secrets: [...h.grants.secrets] },
    bindings: structuredClone(h.bindings),
    ...(h.source === undefined ? {} : { source: { ...h.source } }),
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
  if (h.deployedBy !== null) meta.deployed_by = h.deployedBy;
  if (h.source !== undefined) meta.source = h.source;
  if (!isDefaultBindings(h.bindings)) meta.bindings = { [h.digest]: h.bindings };
  return meta;
}

/** The retained image a rollback goes to, chosen from what the transaction finds kept. */
async function rollbackTarget(name: string, tx: StoreTransaction, options: RollbackOptions): Promise<RetainedImage> {
  const retained = await tx.retained();
  if (options.to !== undefined) {
    if (tx.current?.digest === options.to)
      throw new BermdError('already-serving', `${name} already serves ${options.to}: there is nothing to roll back to`, {
        name,
        digest: options.to,
      });
    const found = retained.find((r) => r.digest === options.to);
    if (found === undefined) throw notRetained(name, `it keeps no image ${options.to}`, retained);
    return found;
  }
  const steps = options.steps ?? 1;
  const found = retained[steps - 1];
  if (found === undefined)
    throw notRetained(
      name,
      retained.length === 0
        ? tx.current === null
          ? 'no harness of that name is deployed or remembered'
          : 'it keeps no image besides the one it serves'
        : `it keeps ${retained.length} image${retained.length === 1 ? '' : 's'} besides the one it serves, fewer than ${steps}`,
      retained,
    );
  return found;
}

/** A rollback's target the store does not keep; the answer lists what it does keep, so the caller can pick one. */
function notRetained(name: string, why: string, retained?: RetainedImage[]): BermdError {
  const kept = retained?.map((r) => r.digest);
  const hint = kept === undefined || kept.length === 0 ? '' : ` (see berm history ${name}, or GET /harnesses/${name}/images)`;
  return new BermdError('not-retained', `cannot roll ${name} back: ${why}${hint}`, {
    name,
    ...(kept === undefined ? {} : { retained: kept }),
  });
}

function notFound(name: string): BermdError {
  return new BermdError('not-found', `no harness named ${name} is deployed`, { name });
}
