/**
 * bermd put together: the registry (deployed set and store), the tool runtime that runs what it holds,
 * the MCP sessions that serve it, and the HTTP app carrying the control API, `/mcp` and the page at
 * `/`. Each room is reached through its door (its index.ts); this is the one place that knows them
 * all. Listening and signals are `main`'s business.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp, HostPolicy } from './app/index.js';
import { Authentication, protectedResourcePlugin, ResourceServer, resourceMetadataUrl, StaticPrincipals } from './auth/index.js';
import { controlPlugin } from './control/index.js';
import { grantedAsks, PostgresStore, Registry, type DeployHooks } from './deploy/index.js';
import { egressContext, HttpEgress, Secrets } from './egress/index.js';
import { wireErrorOf } from './error-table.js';
import type { BermdError } from './errors.js';
import { HARNESS_SETTINGS, HTTP_SYSCALLS, type LimitCode, type Limits } from '@berm/protocol';
import {
  createMcpEndpoint,
  McpSessions,
  Receipts,
  StatelessMcp,
  ToolCatalog,
  type CatalogEntry,
  type EventMessage,
  type McpCore,
  type SessionState,
} from './mcp/index.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, numberDefault } from './limits.js';
import type { DaemonOptions } from './options.js';
import { capMemory, type GuestReport, isRunnerError, ToolRunner, type PreparedHarness, type RunnerError } from './runtime/index.js';
import { uiPlugin } from './ui/index.js';
import { LiveFigures, Telemetry, telemetryDisabled, telemetryRoutes, traceConfig, Tracing } from './telemetry/index.js';

export interface Daemon {
  app: FastifyInstance;
  registry: Registry;
  runner: ToolRunner;
  catalog: ToolCatalog;
  sessions: McpSessions;
  /** The static principals (`--token-file`, `--access`), which SIGHUP replaces; undefined when there are none. */
  principals?: StaticPrincipals;
  /** The OAuth resource server (`--oauth-issuer`, `--resource`); undefined when bermd is none. */
  resourceServer?: ResourceServer;
  /** The meter and its readers; undefined when metrics are off (`OTEL_SDK_DISABLED=true`). */
  telemetry?: Telemetry;
  /** The tracer; undefined when no OTLP endpoint is configured for traces. */
  tracing?: Tracing;
  /** The metrics listener's app (`--metrics-listen`), serving `/metrics` alone, for `main` to listen with; undefined without the flag. */
  metricsApp?: FastifyInstance;
  /**
   * Stops accepting (new connections, and new requests on open ones: 503 shutting-down), lets what is under
   * way finish within the shutdown grace, then stops the calls still running (they answer `closed`) and
   * cuts what still holds a connection; sessions and streams end, the registry writes its usage and closes
   * its store, the workers stop.
   */
  close(): Promise<void>;
}

/**
 * What `createDaemon` needs: the daemon's options (one member per setting, see options.ts), of which
 * those below are required and every other falls back to its setting's default.
 */
export type DaemonConfig = Pick<DaemonOptions, 'stateDir' | 'maxImageSize' | 'token' | 'limits' | 'maxCallDepth' | 'toolSeparator'> &
  Partial<Omit<DaemonOptions, 'stateDir' | 'maxImageSize' | 'token' | 'limits' | 'maxCallDepth' | 'toolSeparator'>> & {
    /** The interval of every SSE stream's keep-alive comment, `/events` and `/mcp` alike; 15 s (the MCP SDK's) when unset. Not a setting: tests shorten it. */
    keepAliveMs?: number;
    /** How often `GET /figures/events` may tell which harnesses' figures moved; 2 s when unset. Not a setting: tests shorten it. */
    figuresIntervalMs?: number;
    /** The environment the OpenTelemetry variables are read from; `process.env` when unset. */
    env?: NodeJS.ProcessEnv;
  };

/** The runtime's options for `limits`: each limit under its setting's name in code. */
function runtimeLimits(limits: Partial<Limits>): { [Code in LimitCode]?: number } {
  const out: { [Code in LimitCode]?: number } = {};
  for (const row of HARNESS_SETTINGS) out[row.code] = limits[row.harness.wire];
  return out;
}

interface Prepared {
  runtime: PreparedHarness;
  listing: CatalogEntry;
  /** Its manifest's tools, whose live figures are kept. */
  tools: string[];
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** berm.log levels (MCP's and two common aliases) onto pino's. */
const PINO_LEVEL: Record<string, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  critical: 'fatal',
  alert: 'fatal',
  emergency: 'fatal',
};

/** A runtime refusal of an image, as the deploy answers it. */
function deployError(e: RunnerError, maxMemoryBytes: number, ownCap = false): BermdError {
  // The code is the error table's; the words and details are the deploy's.
  switch (e.code) {
    case 'memory-too-large':
      return wireErrorOf(e, `${e.message} (see ${ownCap ? 'the max_memory the deploy set' : '--max-memory'})`, {
        limit: maxMemoryBytes,
        where: e.where,
      });
    case 'bad-schema':
      return wireErrorOf(e, e.message, { where: e.where });
    case 'bad-module':
      return wireErrorOf(e, `the runtime cannot run this module: ${e.message}`);
    case 'bad-harness':
      return wireErrorOf(e, e.message, { tool: e.where });
    default:
      return wireErrorOf(e);
  }
}

/**
 * The metrics listener (`--metrics-listen`): its own app, with the Host checks of its own address, serving
 * `/metrics` without a token and nothing else, so a scraper holds no token that could deploy.
 */
function buildMetricsApp(config: DaemonConfig, logger: Logger, telemetry: Telemetry | undefined): FastifyInstance {
  const listen = config.metricsListen!;
  const app = buildApp({
    logger,
    // A scrape carries no body.
    bodyLimit: 1024,
    hosts: new HostPolicy({ listen: listen.host, allowed: config.allowedHosts }),
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  });
  void app.register(telemetryRoutes, { telemetry, probes: false, publicMetrics: true });
  return app;
}

export async function createDaemon(config: DaemonConfig, logger: Logger): Promise<Daemon> {
  const retention = {
    keepImages: config.keepImages,
    historyRetentionMs: config.historyRetentionMs,
    receiptRetentionMs: config.receiptRetentionMs,
  };
  // Opened before anything else starts: a database that does not answer yet is waited for (--store-wait).
  const store =
    config.store === undefined
      ? undefined
      : await PostgresStore.open(config.store, { logger, waitMs: config.storeWaitMs, timeoutMs: config.storeTimeoutMs, retention });
  const serve = config.serve ?? [];
  const secrets = config.secrets ?? Secrets.none();
  // Built only when an HTTP syscall is served: otherwise no harness could reach it, since the deploy checks refuse it.
  const egress =
    serve.length === 0
      ? undefined
      : await HttpEgress.create({
          secrets,
          logger,
          maxBodyBytes: config.httpMaxBodyBytes,
          resolve: config.resolve,
          httpProxy: config.httpProxy,
        });
  const { limits } = config;
  const version = readVersion();
  // What the gauges read, from parts made below; a scrape or an export before they are (the store's
  // wait at start) reads nothing of them.
  let registry: Registry | undefined;
  let runner: ToolRunner | undefined;
  let sessions: McpSessions | undefined;
  let stateless: StatelessMcp | undefined;
  const env = config.env ?? process.env;
  const telemetry = telemetryDisabled(env)
    ? undefined
    : await Telemetry.create({
        version,
        env,
        sources: {
          workersBusy: () => runner?.load().busy ?? 0,
          queueDepths: () => runner?.load().waiting ?? new Map(),
          sessions: () => sessions?.size ?? 0,
          streams: () => ({ session: sessions?.streams ?? 0, listen: stateless?.listens ?? 0 }),
          store: () => registry?.storeHealth() ?? { kind: store === undefined ? 'directory' : 'postgres', reachable: false },
        },
      });
  if (telemetry?.otlp !== undefined) logger.info({ otlp: telemetry.otlp }, 'exporting metrics over OTLP');
  // Only with an endpoint: otherwise no exporter is loaded and every room is handed no tracer.
  const traces = traceConfig(config, env);
  const tracing = traces === undefined ? undefined : await Tracing.start(traces, version, (text) => secrets.redact(text));
  if (traces !== undefined)
    logger.info({ otlp: traces.origin, protocol: traces.protocol, sampler: traces.sampler }, 'exporting traces over OTLP');
  const metrics = telemetry?.metrics;
  // The page's own figures, kept whether or not metrics are (they are not OpenTelemetry's).
  const figures = new LiveFigures();
  // The runtime takes its limits in its own options' terms; this is the one place they are translated.
  const toolRunner = new ToolRunner({
    ...runtimeLimits(limits),
    onCallEnd: (harness, tool, code, waited, ran) => {
      figures.callEnded(harness, tool, code, waited, ran);
      metrics?.callEnded(harness, tool, code, waited, ran);
    },
    onResourceUpdated: (harness, path) => {
      sessions?.publishResourceUpdate(harness, path);
    },
    maxCallDepth: config.maxCallDepth,
    maxQueue: config.maxQueue,
    threads: config.workers === undefined ? undefined : { max: config.workers },
    hostServices: egress?.services(serve),
    onReport: (report: GuestReport) => {
      switch (report.kind) {
        case 'log':
          logger[PINO_LEVEL[report.level] ?? 'info']({ harness: report.harness, tool: report.tool, guest: true }, report.message);
          break;
        case 'event':
        case 'progress':
          // Logged and sent to MCP clients by the call that ran it (mcp/server.ts), which knows its caller.
          break;
      }
    },
  });
  runner = toolRunner;
  const catalog = new ToolCatalog(config.toolSeparator);

  const hooks: DeployHooks<Prepared> = {
    prepare(name, checked, restored) {
      try {
        // The memory cap is not the runtime's to apply: it was compiled into the module (rewriteImage).
        const { maxMemoryBytes, ...own } = runtimeLimits(checked.limits);
        const runtime = toolRunner.prepareHarness({
          module: checked.module,
          manifest: checked.manifest.data,
          digest: checked.digest,
          limits: own,
          context: egressContext(name, checked.declared, checked.grants),
          asks: grantedAsks(checked.grants),
          lazyValidators: restored,
        });
        const leavesMachine = Object.keys(checked.grants.syscalls).some((syscall) => HTTP_SYSCALLS.includes(syscall));
        return {
          runtime,
          listing: catalog.prepare(name, checked.manifest.data, leavesMachine, restored),
          tools: checked.manifest.data.tools.map((t) => t.name),
        };
      } catch (e) {
        throw isRunnerError(e) ? deployError(e, limits.max_memory) : e;
      }
    },
    commit(name, prepared) {
      toolRunner.setHarness(name, prepared.runtime);
      figures.deployed(name, prepared.tools);
      for (const left of catalog.set(prepared.listing)) {
        logger.warn(
          { harness: name, tool: left },
          'a tool name is held by another harness deployed at the same moment; this one is not listed',
        );
      }
    },
    remove(name) {
      toolRunner.removeHarness(name);
      catalog.delete(name);
      metrics?.forget(name);
      figures.forget(name);
    },
  };

  // The memory cap is written into the module before V8 compiles it, so the module compiled at deploy
  // is the one every call instantiates, and an image that starts above the cap is refused there.
  const rewriteImage = (bytes: Uint8Array, maxMemoryBytes = limits.max_memory): Uint8Array => {
    try {
      return capMemory(bytes, maxMemoryBytes);
    } catch (e) {
      if (!isRunnerError(e)) throw e;
      // Bytes the cap cannot read and V8 would not compile either are the compile check's to report.
      if (e.code === 'bad-module' && !WebAssembly.validate(bytes)) return bytes;
      throw deployError(e, maxMemoryBytes, maxMemoryBytes !== limits.max_memory);
    }
  };

  let opened: Registry;
  try {
    opened = await Registry.open({
      stateDir: config.stateDir,
      store,
      retention,
      replica: config.replicaName,
      reconcileIntervalMs: config.reconcileIntervalMs,
      logger,
      hooks: hooks as DeployHooks,
      rewriteImage,
      breaksWindowMs: config.breaksWindowMs,
      servedSyscalls: serve,
      requireEffects: config.requireEffects,
      bounds: limits,
      secretAvailable: (secret, harness) => secrets.availableTo(secret, harness),
      counters:
        metrics === undefined
          ? undefined
          : { changed: (action) => metrics.deployed(action), gateRefused: (action) => metrics.gateRefused(action) },
    });
  } catch (e) {
    await toolRunner.close();
    await egress?.close();
    await store?.close();
    await telemetry?.close();
    await tracing?.close();
    throw e;
  }
  registry = opened;

  const core: McpCore = {
    catalog,
    call: (harness, tool, args, options) => toolRunner.call(harness, tool, args, options),
    runExport: (harness, exportName, request, options) => toolRunner.runExport(harness, exportName, request, options),
    resourceUris: config.resourceUris === 'harness-scheme' ? 'harness-scheme' : 'berm',
    recordUse: (harness, use) => opened.recordUse(harness, use),
    logger,
    version,
    broadcastEvent: (message: EventMessage, from: SessionState) => sessions?.broadcastEvent(message, from),
    keepAliveMs: config.keepAliveMs,
    metrics,
    tracing,
    figures,
    limitsOf: (harness) => toolRunner.limitsOf(harness),
  };
  const receiptStore = opened.store.receipts;
  if (receiptStore !== undefined)
    core.receipts = new Receipts({
      store: receiptStore,
      replica: opened.replica,
      shared: opened.store.watch !== undefined,
      maxKeyBytes: config.maxIdempotencyKeyBytes ?? numberDefault('max-idempotency-key'),
      logger,
    });
  const mcpSessions = new McpSessions(core, config.sessionIdleMs, config.maxSessions, store?.sessions);
  sessions = mcpSessions;
  const mcpStateless = new StatelessMcp(core, { maxListens: config.maxListens });
  stateless = mcpStateless;
  mcpSessions.fanOutResource = (harness, path) => {
    mcpSessions.resourceUpdated(harness, path);
    mcpStateless.resourceUpdated(harness, path);
  };
  opened.onChange((event) => {
    // Whose lists changed: the harness itself, and any whose listing its change touched (the catalog's).
    const changed = catalog.takeChanged().add(event.name);
    mcpSessions.listsChanged(changed);
    mcpStateless.listsChanged(changed);
  });

  const hosts = new HostPolicy({ listen: config.host, allowed: config.allowedHosts });
  const principals =
    config.token === undefined && config.access === undefined ? undefined : new StaticPrincipals(config.access ?? [], config.token);
  const resourceServer =
    config.oauthIssuer === undefined || config.resource === undefined
      ? undefined
      : new ResourceServer({
          issuer: config.oauthIssuer,
          resource: config.resource,
          introspectionClient: config.introspectionClient,
          clockSkewSeconds: config.oauthClockSkewMs === undefined ? undefined : config.oauthClockSkewMs / 1000,
          logger,
        });
  // Before listening, so that a bermd whose authorization server answers verifies tokens from its first
  // request; one that does not answer starts all the same (resource-server.ts says why).
  await resourceServer?.start();
  const auth = new Authentication({
    statics: principals,
    verifier: resourceServer,
    resourceMetadata: resourceServer === undefined ? undefined : resourceMetadataUrl(resourceServer.resource),
  });
  const app = buildApp({
    logger,
    bodyLimit: config.maxImageSize,
    auth,
    hosts,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  });
  const mcp = createMcpEndpoint({
    sessions: mcpSessions,
    stateless: mcpStateless,
    maxBodySize: config.mcpMaxBody,
    fastPath: config.mcpFastPath,
  });
  void app.register(controlPlugin, {
    registry: opened,
    tracing,
    maxImageSize: config.maxImageSize,
    maxEventStreams: config.maxEventStreams,
    keepAliveMs: config.keepAliveMs,
    figures,
    figuresIntervalMs: config.figuresIntervalMs,
    receipts: receiptStore,
  });
  void app.register(mcp.plugin);
  void app.register(uiPlugin, {
    signIn:
      config.oauthIssuer === undefined || config.oauthPageClient === undefined
        ? undefined
        : { issuer: config.oauthIssuer, clientId: config.oauthPageClient },
  });
  if (resourceServer !== undefined)
    void app.register(protectedResourcePlugin, { resource: resourceServer.resource, issuer: resourceServer.issuer });
  // The deployed set is restored before the app exists, so what is left to be ready for is the store.
  const unready = (): string | undefined =>
    opened.storeHealth().reachable
      ? undefined
      : 'the store does not answer: calls are served from the set held here, but deploys wait for it and changes made through other replicas are not followed';
  void app.register(telemetryRoutes, { telemetry, probes: true, publicMetrics: false, unready });
  const metricsApp = config.metricsListen === undefined ? undefined : buildMetricsApp(config, logger, telemetry);

  let closed: Promise<void> | undefined;
  return {
    app,
    registry: opened,
    runner: toolRunner,
    catalog,
    sessions: mcpSessions,
    principals,
    resourceServer,
    telemetry,
    tracing,
    metricsApp,
    close() {
      closed ??= (async () => {
        const graceMs = config.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
        const metricsClosed = metricsApp?.close();
        const appClosed = app.close();
        const mcpClosed = mcp.close();
        const grace = setTimeout(() => {
          logger.warn({ grace_ms: graceMs }, 'the shutdown grace is over: stopping the calls still running and cutting open connections');
          // The calls answer `closed`, their answers go out, then whatever still holds a connection is cut.
          void toolRunner
            .close()
            .then(() => mcpClosed)
            .finally(() => app.server.closeAllConnections());
        }, graceMs);
        try {
          await mcpClosed;
          await appClosed;
        } finally {
          clearTimeout(grace);
        }
        resourceServer?.close();
        await metricsClosed;
        await opened.close();
        await toolRunner.close();
        await egress?.close();
        await telemetry?.close();
        await tracing?.close();
      })();
      return closed;
    },
  };
}
