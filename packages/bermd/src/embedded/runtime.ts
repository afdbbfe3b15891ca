/**
 * bermd's runtime without a daemon: images loaded as a deploy admits them (the same checks, the memory
 * cap compiled in, grants, validators, the catalog's result checks), minus the store, and called as
 * `/mcp` calls them, answering what a 2026-07-28 `tools/call` would. `crab run` and the testing helper
 * stand on this, so that what a harness author sees before deploying is what bermd will do.
 */
import type { ManifestData } from '@berm/manifest';
import {
  type CallErrorCode,
  HARNESS_SETTINGS,
  ASK_SYSCALLS,
  HTTP_SYSCALLS,
  isCallRefusal,
  type LimitCode,
  type Limits,
  SETTINGS,
  type ToolAnswerDocument,
  type ToolContent,
  type ToolEvent,
  type ToolLog,
} from '@berm/protocol';
// The deploy and MCP rooms through their light doors: their own doors load the stores and the MCP SDK,
// which a run never uses and `crab run` would pay for at every start.
import { admit, grantedAsks } from '../deploy/light.js';
import { egressContext, HttpEgress, SERVABLE_SYSCALLS, Secrets } from '../egress/index.js';
import { BermdError, isBermdError } from '../errors.js';
import { wireErrorOf } from '../error-table.js';
import { DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH, settingDefault, workersFor } from '../limits.js';
import { toolResult, ToolCatalog } from '../mcp/light.js';
import {
  capMemory,
  type CallErrorCode as RuntimeCallErrorCode,
  type GuestReport,
  type HostService,
  isRunnerError,
  type StartedWorkers,
  ToolRunner,
} from '../runtime/index.js';

// The protocol lists the codes a call may fail with; the runtime is what makes them: none may be missing there.
const everyCodeListed: [Exclude<RuntimeCallErrorCode, CallErrorCode>] extends [never] ? true : never = true;
void everyCodeListed;

export interface EmbeddedOptions {
  /** The limits calls run under, by their wire names (`timeout`, `max_memory`, ...); bermd's defaults for those unset. */
  limits?: Partial<Limits>;
  /** How deep `berm.call` may nest: bermd's default when unset. */
  maxCallDepth?: number;
  /** The syscalls served (`berm.http.fetch`); none by default: a guest's request is refused, nothing leaves the machine. */
  serve?: readonly string[];
  /** The secrets a served syscall may put in a request, in bermd's secrets file format (`bermd --secrets`). */
  secrets?: Secrets;
  /** The operator's proxy, for `berm.http.proxy`. */
  httpProxy?: string;
  /** The tool separator the call's refusals and results name tools with: bermd's default (`.`) when unset. */
  toolSeparator?: string;
  /**
   * Worker threads started ahead (`startWorkers`, from `bermd/runtime/workers`), taken as the runtime's
   * own; `open` ends them when it throws. Calls get the same limits on them as on threads the runtime
   * starts itself: the limits travel with each call.
   */
  workers?: StartedWorkers;
  /**
   * Runs on the caller's thread each call that reaches no host call served off the guest's thread (every
   * call of an image that imports neither `berm.http.*` nor an ask), with the same limits, its time limit
   * kept by V8's watchdog; the others on worker threads, started when one comes (`RunnerOptions.inline`).
   * For a command that runs a call and ends, where a thread's start costs more than the call.
   */
  inline?: boolean;
}

/** One image to load: its harness name and its bytes. */
export interface EmbeddedImage {
  name: string;
  bytes: Uint8Array;
}

/** Why a call did not give the tool's answer: the host refused it or stopped it, with `/mcp`'s code and words. */
export class CallRefused extends Error {
  readonly code: CallErrorCode;
  /** For `invalid-arguments`: a JSON pointer into the arguments. */
  readonly path?: string;
  constructor(code: CallErrorCode, message: string, path?: string) {
    super(message);
    this.name = 'CallRefused';
    this.code = code;
    if (path !== undefined) this.path = path;
  }
  toJSON(): { code: string; message: string; path?: string } {
    return { code: this.code, message: this.message, path: this.path };
  }
}

/** bermd's `--tool-separator` when it is not given. */
const DEFAULT_TOOL_SEPARATOR = settingDefault(SETTINGS.find((row) => row.flag === 'tool-separator')!) as string;

/** The runtime's limits in its options' terms, from their wire names. */
function runtimeLimits(limits: Limits): { [Code in LimitCode]: number } {
  const out = {} as { [Code in LimitCode]: number };
  for (const row of HARNESS_SETTINGS) out[row.code] = limits[row.harness.wire];
  return out;
}

/** A syscall not served here: the guest's request is refused with what to give to serve it. */
function unserved(name: string): HostService {
  return async () => ({ refused: `${name} is not served: give --serve ${name} (and --secrets FILE for the secrets it names) to serve it` });
}

/**
 * The egress for served syscalls, with its logger loaded only then: most runs serve none, and pino is
 * not worth its load to a run that logs nothing. (HttpEgress loads undici itself, when created.)
 */
async function servedEgress(secrets: Secrets, httpProxy: string | undefined): Promise<HttpEgress> {
  const { pino } = await import('pino');
  // Quiet: what a request's refusal says reaches the guest, and the caller through its answer.
  return HttpEgress.create({ secrets, logger: pino({ level: 'silent' }), httpProxy });
}

export class EmbeddedRuntime {
  private readonly runner: ToolRunner;
  private readonly catalog: ToolCatalog;
  private readonly egress?: HttpEgress;
  private readonly limits: Limits;
  private readonly serve: readonly string[];
  private readonly secrets: Secrets;
  private readonly manifests = new Map<string, ManifestData>();

  private constructor(options: EmbeddedOptions, secrets: Secrets, egress: HttpEgress | undefined) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.serve = options.serve ?? [];
    this.secrets = secrets;
    this.egress = egress;
    const services = new Map<string, HostService>(HTTP_SYSCALLS.map((name) => [name, unserved(name)]));
    for (const [name, service] of this.egress?.services(this.serve) ?? []) services.set(name, service);
    const { maxConcurrency, ...limits } = runtimeLimits(this.limits);
    this.runner = new ToolRunner({
      ...limits,
      maxConcurrency,
      maxCallDepth: options.maxCallDepth ?? DEFAULT_MAX_CALL_DEPTH,
      // A command runs a call or a few: one worker kept, as many as a daemon's when they are asked for.
      threads: { min: 1, max: workersFor(maxConcurrency) },
      hostServices: services,
      started: options.workers,
      inline: options.inline,
    });
    this.catalog = new ToolCatalog(options.toolSeparator ?? DEFAULT_TOOL_SEPARATOR);
  }

  /**
   * Loads `images` (the first is the one called; the others are the programs its `berm.call` may reach)
   * as a deploy admits each: throws the `BermdError` a deploy would refuse it with.
   */
  static async open(images: readonly EmbeddedImage[], options: EmbeddedOptions = {}): Promise<EmbeddedRuntime> {
    let runtime: EmbeddedRuntime | undefined;
    try {
      const serve = options.serve ?? [];
      for (const name of serve) {
        if (!SERVABLE_SYSCALLS.includes(name))
          throw new BermdError('bad-request', `${name} cannot be served: the runtime serves ${SERVABLE_SYSCALLS.join(' and ')}`);
      }
      const secrets = options.secrets ?? Secrets.none();
      const egress = serve.length === 0 ? undefined : await servedEgress(secrets, options.httpProxy);
      runtime = new EmbeddedRuntime(options, secrets, egress);
      for (const image of images) {
        try {
          await runtime.load(image);
        } catch (e) {
          // Which image a refusal is about, when several are loaded.
          throw isBermdError(e) ? new BermdError(e.code, e.message, { ...e.details, harness: image.name }) : e;
        }
      }
    } catch (e) {
      await runtime?.close();
      // Those the runtime took it has ended; these are any it never took (it was not made).
      await options.workers?.terminate();
      throw e;
    }
    return runtime;
  }

  private async load({ name, bytes }: EmbeddedImage): Promise<void> {
    const maxMemory = this.limits.max_memory;
    const rewrite = (image: Uint8Array): Uint8Array => {
      try {
        return capMemory(image, maxMemory);
      } catch (e) {
        if (!isRunnerError(e)) throw e;
        // Bytes the cap cannot read and V8 would not compile either are the compile check's to report.
        if (e.code === 'bad-module' && !WebAssembly.validate(image)) return image;
        throw wireErrorOf(e, e.code === 'memory-too-large' ? `${e.message} (see --max-memory)` : e.message, { limit: maxMemory });
      }
    };
    const { harness } = await admit(
      bytes,
      { limits: {} },
      // Every syscall bermd can serve is admitted: one not served here is refused to the guest when it asks, so its other tools still run.
      { checks: { servedSyscalls: new Set([...SERVABLE_SYSCALLS, ...ASK_SYSCALLS]), rewrite }, bounds: this.limits },
      'deploy',
    );
    const { maxMemoryBytes: _capped, ...own } = runtimeLimits(harness.limits);
    try {
      const prepared = this.runner.prepareHarness({
        module: harness.module,
        manifest: harness.manifest.data,
        digest: harness.digest,
        limits: own,
        context: egressContext(name, harness.declared, harness.grants),
        asks: grantedAsks(harness.grants),
      });
      const leavesMachine = Object.keys(harness.grants.syscalls).some((syscall) => HTTP_SYSCALLS.includes(syscall));
      const listing = this.catalog.prepare(name, harness.manifest.data, leavesMachine);
      this.runner.setHarness(name, prepared);
      this.catalog.set(listing);
      this.manifests.set(name, harness.manifest.data);
    } catch (e) {
      throw isRunnerError(e) ? wireErrorOf(e, e.message, { where: e.where }) : e;
    }
  }

  /** The manifest `harness` was loaded with, if it was. */
  manifest(harness: string): ManifestData | undefined {
    return this.manifests.get(harness);
  }

  /** The separator between a harness's name and its tool's in the names calls are refused with. */
  get separator(): string {
    return this.catalog.separator;
  }

  /**
   * Calls `harness`'s `tool` with `args` (a JSON value) as `/mcp` would for a 2026-07-28 client: the
   * tool's answer, an error answer included, with the events and log lines its chain reported; throws
   * `CallRefused` when the host refused or stopped the call.
   */
  async call(harness: string, tool: string, args: unknown): Promise<ToolAnswerDocument> {
    const name = this.catalog.fullName(harness, tool);
    const listed = this.catalog.lookup(name);
    if (listed === undefined) {
      const known = this.runner.has(harness);
      throw new CallRefused(known ? 'unknown-tool' : 'unknown-harness', `Unknown tool: ${name}`);
    }
    const events: ToolEvent[] = [];
    const logs: ToolLog[] = [];
    const outcome = await this.runner.call(harness, tool, args ?? {}, {
      onReport: (report: GuestReport) => {
        if (report.kind === 'event')
          events.push({ harness: report.harness, tool: report.tool, event: report.event, fields: report.fields });
        else if (report.kind === 'log')
          logs.push({ harness: report.harness, tool: report.tool, level: report.level, message: report.message });
      },
    });
    const answer = toolResult(listed, outcome, 'modern');
    const failed = (answer._meta?.['berm/error'] ?? undefined) as { code: CallErrorCode; path?: string } | undefined;
    if (answer.isError === true && failed !== undefined && isCallRefusal(failed.code)) {
      const text = answer.content.find((c) => c.type === 'text');
      throw new CallRefused(failed.code, text?.type === 'text' ? text.text : failed.code, failed.path);
    }
    return {
      result: answer.structuredContent ?? null,
      content: answer.content as ToolContent[],
      is_error: answer.isError === true,
      events,
      logs,
    };
  }

  /** Stops the workers and ends what the served syscalls hold open. */
  async close(): Promise<void> {
    await this.runner.close();
    await this.egress?.close();
  }
}
