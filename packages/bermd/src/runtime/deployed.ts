/**
 * The harnesses a runner can call, as the main thread holds them: each checked and with its validators
 * compiled once, and the payloads its tasks carry to a worker (see runner.ts for why a task carries
 * modules rather than a worker caching them).
 */
import type { ManifestData } from '@berm/manifest';
import { ASK_SYSCALLS, HOST_CALL, toolExport } from '@berm/protocol';
import { RunnerError } from './errors.js';
import { ASK_HOST_CALLS, ASYNC_HOST_CALLS } from './http-fetch.js';
import { compileValidators, type HarnessValidators } from './validators.js';
import type { ProgramPayload } from './worker-messages.js';

/** A harness's own limits, below the runner's (which apply when these are unset). */
export interface HarnessLimits {
  /** Wall-clock limit of a call that enters through this harness, its nested calls included. */
  callTimeoutMs?: number;
  /** The longest result (and host-call request) read from this harness's instances, wherever in a chain they run. */
  maxResultBytes?: number;
  /** How many calls entering through this harness may run at once; the runner's limit when unset, never above it. */
  maxConcurrency?: number;
}

export interface HarnessInput {
  /** Compiled from bytes that went through `capMemory` (or `ToolRunner.compile`, which does both). */
  module: WebAssembly.Module;
  manifest: ManifestData;
  digest: string;
  limits?: HarnessLimits;
  /** Anything the deployer wants its host services to see for this harness (e.g. what it is granted); never sent to a worker. */
  context?: unknown;
  /** The syscalls asking the call's client (`berm.elicit`, `berm.sample`) it is granted; unset, those its manifest declares. */
  asks?: readonly string[];
  /**
   * Compile the validators on the harness's first call rather than now: for a harness whose schemas
   * compiled when it was deployed (a restore), so that a restart does not compile every harness's.
   * Their check against the meta-schema is made now either way.
   */
  lazyValidators?: boolean;
}

/** A harness checked and with its validators compiled, ready for `setHarness` (which then cannot fail). */
export class PreparedHarness {
  constructor(
    readonly input: HarnessInput,
    readonly validators: HarnessValidators,
    /** It imports `berm.call`: its tasks carry the programs within reach. */
    readonly callsOthers: boolean,
    /** It imports `berm.emit`: its tasks carry its event validators. */
    readonly emits: boolean,
    /** It imports a host call served off the guest's thread (`ASYNC_HOST_CALLS`, `ASK_HOST_CALLS`): its instances cannot run inline (inline.ts). */
    readonly forwards: boolean,
  ) {}
}

/** One deployed harness. */
export interface Entry {
  name: string;
  digest: string;
  manifest: ManifestData;
  validators: HarnessValidators;
  /** Without validator source: for a harness whose instance never validates anything in the worker. */
  bare: ProgramPayload;
  /** With validator source, made on first need (`fullPayload`): for nested-call targets and harnesses that emit or call. */
  full?: ProgramPayload;
  callsOthers: boolean;
  needsChecks: boolean;
  /** `PreparedHarness.forwards`. */
  forwards: boolean;
  callTimeoutMs: number;
  maxConcurrency: number;
  context: unknown;
  /** The syscalls asking the call's client it is granted (`HarnessInput.asks`). */
  asks: readonly string[];
}

/** The content kinds each tool declares, by tool; undefined when none declares any (the payload then carries nothing). */
function contentKinds(manifest: ManifestData): Record<string, string[]> | undefined {
  let out: Record<string, string[]> | undefined;
  for (const tool of manifest.tools) if (tool.content !== undefined && tool.content.length > 0) (out ??= {})[tool.name] = [...tool.content];
  return out;
}

export function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RunnerError('bad-option', `${name} must be an integer of at least ${min}, not ${value}`);
  return value;
}

/** The host calls whose work the main thread does while the guest waits. */
const FORWARDED: readonly string[] = [...ASYNC_HOST_CALLS, ...ASK_HOST_CALLS];

/**
 * Everything about a harness that can fail, done without touching the deployed set: the manifest's
 * tools are checked against the module's exports, and validators for every tool's arguments and every
 * event's fields are compiled. Throws `RunnerError` (`bad-schema`, `bad-harness`).
 */
export function prepareHarness(harness: HarnessInput): PreparedHarness {
  const { module, manifest } = harness;
  const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  for (const tool of manifest.tools) {
    if (!exported.has(toolExport(tool.name)))
      throw new RunnerError('bad-harness', `tool "${tool.name}" has no export ${toolExport(tool.name)}`, tool.name);
  }
  const imported = new Set(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`));
  return new PreparedHarness(
    harness,
    compileValidators(manifest, harness.lazyValidators === true),
    imported.has(HOST_CALL.call),
    imported.has(HOST_CALL.emit),
    FORWARDED.some((name) => imported.has(name)),
  );
}

/** The deployed set: entries by name, and for each harness that calls others the programs its calls can reach. */
export class DeployedSet {
  private readonly entries = new Map<string, Entry>();
  /** The programs each harness can reach, recomputed after any deploy or undeploy. */
  private readonly closures = new Map<string, ProgramPayload[]>();
  /** The entry each payload was built for; weak, so a replaced deploy goes once no call holds its payloads. */
  private readonly owners = new WeakMap<ProgramPayload, Entry>();
  private nextKey = 1;

  constructor(private readonly defaults: { callTimeoutMs: number; maxResultBytes: number; maxCallDepth: number; maxConcurrency: number }) {}

  set(name: string, prepared: PreparedHarness): void {
    const { module, manifest, digest, limits = {} } = prepared.input;
    const callTimeoutMs = positiveInteger('limits.callTimeoutMs', limits.callTimeoutMs ?? this.defaults.callTimeoutMs, 1);
    const maxResultBytes = positiveInteger('limits.maxResultBytes', limits.maxResultBytes ?? this.defaults.maxResultBytes, 1);
    const maxConcurrency = Math.min(
      positiveInteger('limits.maxConcurrency', limits.maxConcurrency ?? this.defaults.maxConcurrency, 1),
      this.defaults.maxConcurrency,
    );
    const bare: ProgramPayload = {
      name,
      key: this.nextKey++,
      module,
      tools: manifest.tools.map((t) => t.name),
      events: manifest.events.map((e) => e.name),
      programs: [...(manifest.deps?.programs ?? [])],
      validators: '',
      maxResultBytes,
      resources: resourcePaths(manifest),
    };
    const content = contentKinds(manifest);
    if (content !== undefined) bare.content = content;
    const entry: Entry = {
      name,
      digest,
      manifest,
      validators: prepared.validators,
      bare,
      callsOthers: prepared.callsOthers,
      needsChecks: prepared.callsOthers || prepared.emits,
      forwards: prepared.forwards,
      callTimeoutMs,
      maxConcurrency,
      context: prepared.input.context,
      asks: prepared.input.asks ?? ASK_SYSCALLS.filter((name) => Object.hasOwn(manifest.deps?.syscalls ?? {}, name)),
    };
    this.owners.set(entry.bare, entry);
    this.entries.set(name, entry);
    this.closures.clear();
  }

  delete(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.closures.clear();
    return removed;
  }

  get(name: string): Entry | undefined {
    return this.entries.get(name);
  }

  /** The entry `payload` was built for. */
  ownerOf(payload: ProgramPayload): Entry | undefined {
    return this.owners.get(payload);
  }

  /** `entry`'s payload with its validators' source, made the first time a call needs it. Throws as `HarnessValidators.source` does. */
  private fullPayload(entry: Entry): ProgramPayload {
    if (entry.full === undefined) {
      entry.full = { ...entry.bare, validators: entry.validators.source() };
      this.owners.set(entry.full, entry);
    }
    return entry.full;
  }

  /** The called harness first, then (only if it can call) every deployed program within reach of the depth limit. */
  programsFor(entry: Entry): ProgramPayload[] {
    if (!entry.callsOthers) return [entry.needsChecks ? this.fullPayload(entry) : entry.bare];
    let programs = this.closures.get(entry.name);
    if (programs !== undefined) return programs;
    const seen = new Set([entry.name]);
    programs = [this.fullPayload(entry)];
    let frontier = [entry];
    for (let depth = 1; depth <= this.defaults.maxCallDepth && frontier.length > 0; depth++) {
      const next: Entry[] = [];
      for (const from of frontier) {
        if (!from.callsOthers) continue;
        for (const name of from.bare.programs) {
          const target = this.entries.get(name);
          if (target === undefined || seen.has(name)) continue;
          seen.add(name);
          programs.push(this.fullPayload(target));
          next.push(target);
        }
      }
      frontier = next;
    }
    this.closures.set(entry.name, programs);
    return programs;
  }
}

/** The paths `berm.resource_updated` may name: the declared resources' and templates'; undefined when there are none. */
function resourcePaths(data: ManifestData): string[] | undefined {
  const paths = [...(data.resources ?? []), ...(data.resource_templates ?? [])].map((r) => r.path);
  return paths.length === 0 ? undefined : paths;
}
