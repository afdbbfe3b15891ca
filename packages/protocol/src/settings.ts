/**
 * Every setting of berm, one row each: bermd's flags, and among them the limits a deploy may set for one
 * harness. What reads a setting reads its row (bermd's parser, `--help` and config type, the deploy query's
 * codec, the stored bindings' decoder, `crab deploy`'s flags, the page's deploy form, the README's table),
 * so a setting is spelt once: `flag` on a command line, `wire` on the wire (the deploy query, stored
 * bindings, API answers), `code` in code.
 *
 * A default that depends on the machine (`{ machine: 'cores' }`) is declared here and computed by bermd:
 * the protocol runs in browsers too and imports nothing.
 */
import { DAY_MS, HOUR_MS, MIN_MEMORY_BYTES, MINUTE_MS, SECOND_MS, SIZE_UNITS } from './units.js';

/**
 * How a setting's text is read: `duration` and `size` in the grammar of units.ts, `count` a whole
 * number of at least 1, `whole` one of at least 0, `boolean` `true` or `false`, `switch` present or
 * not, `string` as given, `list` repeatable (and comma-separated where `commas`).
 */
export type SettingKind = 'duration' | 'size' | 'count' | 'whole' | 'boolean' | 'switch' | 'string' | 'list';

/** Defaults bermd computes from the machine it runs on. */
export type MachineDefault = 'cores' | 'workers-for-concurrency' | 'state-dir';

export interface Setting {
  /** On the command line, without `--`. */
  readonly flag: string;
  /** The name of the daemon's option holding it (for a per-harness limit, also the runtime's). */
  readonly code: string;
  readonly kind: SettingKind;
  /** The value when none is given; absent: none. */
  readonly default?: number | string | boolean | { readonly machine: MachineDefault };
  /** The least and most a value may be (ms, bytes, a count), past the kind's own. */
  readonly min?: number;
  readonly max?: number;
  /** A duration where 0 means none (no wait, never), which a time limit refuses. */
  readonly zeroMeansNone?: boolean;
  /** Values a refusal shows as examples, when the kind's own (`500ms, 10s or 2m`) would mislead: a window is days. */
  readonly examples?: string;
  /** The placeholder in help: `DURATION`, `SIZE`, `N`, `FILE`. */
  readonly value?: string;
  /** A limit a deploy may set for one harness, at most the daemon's (which it then clamps to). */
  readonly harness?: {
    /** Its name on the wire: the deploy query's parameter, the stored bindings' key, the API answers' key. */
    readonly wire: string;
    /** The key stored bindings had before: still read from stored data, never written. */
    readonly legacy?: string;
    /** Its name in a form (the page's deploy form): a few words. */
    readonly title: string;
    /** Values to show as an example: `500ms, 10s, 2m`. */
    readonly example: string;
  };
  /** Applies to a `--store` database only. */
  readonly storeOnly?: boolean;
  /** One line of help (more lines follow `\n`). */
  readonly help: string;
  /** The row of the README's reliability table: what is bounded (absent: not a bound). */
  readonly bound?: string;
}

const KIB = SIZE_UNITS.K;
const MIB = SIZE_UNITS.M;

/**
 * The rows, in the order `--help` lists them. Default values are the daemon's: a room's own constant
 * (the MCP caps, the egress body bound) is checked against its row by the settings test.
 */
export const SETTINGS = [
  {
    flag: 'listen',
    code: 'listen',
    kind: 'string',
    value: 'HOST:PORT',
    default: '127.0.0.1:7477',
    help: 'address to bind; port 0 picks a free one',
  },
  {
    flag: 'metrics-listen',
    code: 'metricsListen',
    kind: 'string',
    value: 'HOST:PORT',
    help: 'also serve GET /metrics, without a token, on this address, for a scraper (:PORT binds loopback); nothing else is served there',
  },
  {
    flag: 'otel-exporter-otlp-endpoint',
    code: 'otelExporterOtlpEndpoint',
    kind: 'string',
    value: 'URL',
    help: 'send traces over OTLP/HTTP to this collector (its base URL: /v1/traces is added); wins over OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. Without either, nothing is traced',
  },
  {
    flag: 'otel-exporter-otlp-protocol',
    code: 'otelExporterOtlpProtocol',
    kind: 'string',
    value: 'PROTOCOL',
    help: "how traces are encoded: http/protobuf (OTEL_EXPORTER_OTLP_PROTOCOL's default) or http/json",
  },
  {
    flag: 'otel-service-name',
    code: 'otelServiceName',
    kind: 'string',
    value: 'NAME',
    help: "the traces' service.name (OTEL_SERVICE_NAME; bermd when neither says)",
  },
  {
    flag: 'otel-traces-sampler',
    code: 'otelTracesSampler',
    kind: 'string',
    value: 'SAMPLER',
    help: 'which traces are kept (OTEL_TRACES_SAMPLER): always_on, always_off, traceidratio, parentbased_always_on (the default), parentbased_always_off or parentbased_traceidratio',
  },
  {
    flag: 'otel-traces-sampler-arg',
    code: 'otelTracesSamplerArg',
    kind: 'string',
    value: 'RATIO',
    help: 'the ratio of a traceidratio sampler, 0 to 1 (OTEL_TRACES_SAMPLER_ARG; 1 when neither says)',
  },
  {
    flag: 'otel-record-content',
    code: 'otelRecordContent',
    kind: 'switch',
    default: false,
    help: "record each tool call's arguments and result on its span (gen_ai.tool.call.arguments, gen_ai.tool.call.result), secrets' values hidden",
  },
  {
    flag: 'state',
    code: 'stateDir',
    kind: 'string',
    value: 'DIR',
    default: { machine: 'state-dir' },
    help: 'directory holding the deployed set ($XDG_STATE_HOME/bermd or ~/.local/state/bermd when unset)',
  },
  {
    flag: 'store',
    code: 'store',
    kind: 'string',
    value: 'postgres://USER@HOST:PORT/DB',
    help: 'a PostgreSQL database holding the deployed set instead, shared by every bermd pointed at it (replicas)',
  },
  {
    flag: 'store-wait',
    code: 'storeWaitMs',
    kind: 'duration',
    zeroMeansNone: true,
    default: 60 * SECOND_MS,
    storeOnly: true,
    help: 'how long to wait at start for the database to answer before exiting 1: 60s, 5m; 0 tries once',
  },
  {
    flag: 'reconcile-interval',
    code: 'reconcileIntervalMs',
    kind: 'duration',
    zeroMeansNone: true,
    default: 30 * SECOND_MS,
    storeOnly: true,
    help: "how often to compare the deployed set with the database's, for changes whose notice was missed; 0 never",
  },
  {
    flag: 'store-timeout',
    code: 'storeTimeoutMs',
    kind: 'duration',
    default: 10 * SECOND_MS,
    max: HOUR_MS,
    storeOnly: true,
    help: 'how long the database may take to answer a connection or a statement before what needs it is answered 503',
  },
  {
    flag: 'max-image-size',
    code: 'maxImageSize',
    kind: 'size',
    default: 64 * MIB,
    help: 'largest image a deploy accepts, in bytes',
    bound: 'a request body: an image',
  },
  {
    flag: 'token-file',
    code: 'tokenFile',
    kind: 'string',
    value: 'FILE',
    help: "file holding a bearer token every request must carry (default: no auth); the principal it names is 'operator', holding every scope",
  },
  {
    flag: 'access',
    code: 'accessFile',
    kind: 'string',
    value: 'FILE',
    help: 'JSON array of principals {"name", "token_sha256", "scopes"} whose tokens requests may carry (bermd token new adds one); SIGHUP reads it again',
  },
  {
    flag: 'oauth-issuer',
    code: 'oauthIssuer',
    kind: 'string',
    value: 'URL',
    help: 'an OAuth 2.1 authorization server whose access tokens requests may carry (https://, or http:// on loopback); needs --resource',
  },
  {
    flag: 'resource',
    code: 'resource',
    kind: 'string',
    value: 'URL',
    help: "this bermd's URI as the authorization server knows it (https://berm.example.com/mcp): a token is accepted only if its audience holds it",
  },
  {
    flag: 'oauth-introspection-client',
    code: 'oauthIntrospectionClientFile',
    kind: 'string',
    value: 'FILE',
    help: "file holding CLIENT_ID:CLIENT_SECRET, bermd's own client at the authorization server: opaque tokens are asked about with it (RFC 7662)",
  },
  {
    flag: 'oauth-clock-skew',
    code: 'oauthClockSkewMs',
    kind: 'duration',
    zeroMeansNone: true,
    default: MINUTE_MS,
    max: HOUR_MS,
    help: "how far apart bermd's clock and the authorization server's may be when a token's exp and nbf are checked: 60s, 5m; 0s none",
  },
  {
    flag: 'oauth-page-client',
    code: 'oauthPageClient',
    kind: 'string',
    value: 'ID',
    help: "the public client of --oauth-issuer's server that the page at / signs in as (PKCE, no secret; its redirect URI is the page's URL)",
  },
  {
    flag: 'allowed-host',
    code: 'allowedHosts',
    kind: 'list',
    value: 'NAME',
    help: "a name requests may address bermd by besides localhost, 127.0.0.0/8 and [::1], e.g. a reverse proxy's (repeatable)",
    bound:
      'the names a request may address bermd by (Host) and come from (Origin), besides `localhost`, 127.0.0.0/8, `[::1]` and the listen address',
  },
  {
    flag: 'insecure-no-auth',
    code: 'insecureNoAuth',
    kind: 'switch',
    default: false,
    help: 'listen on a non-loopback address without --token-file, --access or --oauth-issuer: anyone who can reach the port deploys and calls',
  },
  {
    flag: 'log-level',
    code: 'logLevel',
    kind: 'string',
    value: 'LEVEL',
    default: 'info',
    help: 'pino level for the structured log on stderr',
  },
  {
    flag: 'call-timeout',
    code: 'callTimeoutMs',
    kind: 'duration',
    default: 10 * SECOND_MS,
    harness: { wire: 'timeout', legacy: 'timeout_ms', title: 'Call time limit', example: '500ms, 10s, 2m' },
    help: 'wall-clock limit of one tool call, nested calls included: 500ms, 10s, 2m; a bare number is seconds',
    bound: "a call's wall-clock time, waiting for a worker included",
  },
  {
    flag: 'max-memory',
    code: 'maxMemoryBytes',
    kind: 'size',
    default: 64 * MIB,
    min: MIN_MEMORY_BYTES,
    harness: { wire: 'max_memory', legacy: 'max_memory_bytes', title: 'Memory cap', example: '16M, 512K' },
    help: 'most memory one guest instance may have; an image starting above it is refused at deploy',
    bound: "a guest's memory",
  },
  {
    flag: 'max-result-size',
    code: 'maxResultBytes',
    kind: 'size',
    default: MIB,
    harness: { wire: 'max_result_size', legacy: 'max_result_bytes', title: 'Result size limit', example: '256K' },
    help: 'longest result a tool may answer (and host-call request a guest may make; and the logs and events of one call)',
    bound: "a result; one host-call request; one call's logs and events together",
  },
  {
    flag: 'max-call-depth',
    code: 'maxCallDepth',
    kind: 'whole',
    default: 4,
    help: 'how deep berm.call may nest; 0 refuses the first nested call',
    bound: '`berm.call` depth',
  },
  {
    flag: 'max-concurrency',
    code: 'maxConcurrency',
    kind: 'count',
    default: { machine: 'cores' },
    harness: { wire: 'max_concurrency', title: 'Calls at once', example: '1, 4' },
    help: 'how many calls entering through one harness run at once; the others wait their turn',
    bound: "one harness's calls running at once",
  },
  {
    flag: 'workers',
    code: 'workers',
    kind: 'count',
    default: { machine: 'workers-for-concurrency' },
    help: 'worker threads running calls, more than --max-concurrency',
    bound: 'worker threads (always more than `--max-concurrency`)',
  },
  {
    flag: 'max-queue',
    code: 'maxQueue',
    kind: 'whole',
    default: 64,
    help: 'how many calls one harness may have waiting for a worker; past that a call is refused as busy',
    bound: "one harness's calls waiting for a worker (past it: `busy`, nothing runs)",
  },
  {
    flag: 'tool-separator',
    code: 'toolSeparator',
    kind: 'string',
    value: 'SEP',
    default: '.',
    help: 'between harness and tool in MCP tool names, from . _ - /',
  },
  {
    flag: 'resource-uris',
    code: 'resourceUris',
    kind: 'string',
    value: 'FORM',
    default: 'berm',
    help: "where a harness's resources are listed: berm (berm://HARNESS/PATH) or harness-scheme (HARNESS://PATH, for a harness named as a URI scheme); reads take both",
  },
  {
    flag: 'breaks-window',
    code: 'breaksWindowMs',
    kind: 'duration',
    zeroMeansNone: true,
    examples: '30d, 12h, 90m or 3600',
    default: 30 * DAY_MS,
    help: 'a redeploy that breaks a tool or event used this recently is refused unless forced: 30d, 12h, 90m; a bare number is seconds; 0 refuses none',
  },
  {
    flag: 'keep-images',
    code: 'keepImages',
    kind: 'whole',
    default: 5,
    max: 1000,
    help: 'how many images each harness keeps besides the one it serves, with their bindings, for a rollback; 0 keeps only the one it serves',
    bound: 'retained images per harness, besides the one it serves (an undeployed harness also keeps the one it served last)',
  },
  {
    flag: 'history-retention',
    code: 'historyRetentionMs',
    kind: 'duration',
    examples: '90d, 30d or 12h',
    default: 90 * DAY_MS,
    min: 60 * SECOND_MS,
    help: "how long history entries are kept (a deployed harness always keeps its newest), and an undeployed harness's history and images, so its undeploy can be undone: 90d, 30d, 12h",
    bound: 'age of history entries, and how long an undeployed harness is remembered (also at most 1000 entries per harness)',
  },
  {
    flag: 'receipt-retention',
    code: 'receiptRetentionMs',
    kind: 'duration',
    examples: '24h, 7d or 30m',
    default: DAY_MS,
    min: MINUTE_MS,
    help: 'how long the receipt of a call to an external_write tool is kept: within it, a call with the same idempotency key is answered from it, not run again: 24h, 7d, 30m',
    bound: 'age of receipts (a retry with the same idempotency key after it runs the write again)',
  },
  {
    flag: 'max-idempotency-key',
    code: 'maxIdempotencyKeyBytes',
    kind: 'size',
    default: 256,
    min: 16,
    help: 'longest idempotency key a client may send in _meta["io.berm/idempotency-key"]; a longer one is refused (bad-idempotency-key) and nothing runs',
    bound: 'an idempotency key a client sends (past it: `bad-idempotency-key`, nothing runs)',
  },
  {
    flag: 'replica-name',
    code: 'replicaName',
    kind: 'string',
    value: 'NAME',
    help: 'how this bermd names itself in deploy history (default: the host name and the process id)',
  },
  {
    flag: 'serve',
    code: 'serve',
    kind: 'list',
    value: 'SYSCALL[,SYSCALL]',
    help: "syscalls beyond the ABI's own to serve (default: none)",
  },
  {
    flag: 'require-effects',
    code: 'requireEffects',
    kind: 'switch',
    default: false,
    help: 'refuse to deploy an image declaring berm.http.fetch or berm.http.proxy whose non-query tools leave their effect undeclared',
  },
  {
    flag: 'http-proxy',
    code: 'httpProxy',
    kind: 'string',
    value: 'URL',
    help: 'the proxy berm.http.proxy sends through (http://HOST:PORT); required to serve berm.http.proxy',
  },
  {
    flag: 'resolve',
    code: 'resolve',
    kind: 'list',
    value: 'HOST:PORT:ADDRESS',
    help: "direct requests to HOST on PORT connect to ADDRESS (repeatable, as curl's)",
  },
  {
    flag: 'secrets',
    code: 'secretsFile',
    kind: 'string',
    value: 'FILE',
    help: 'JSON file of secrets for {secret:NAME} in request headers; must not be readable by group or others; SIGHUP reads it again',
  },
  {
    flag: 'http-max-body',
    code: 'httpMaxBodyBytes',
    kind: 'size',
    default: MIB,
    help: 'longest response body a guest is handed; longer ones are cut and marked truncated',
    bound: 'an HTTP response body handed to a guest',
  },
  {
    flag: 'session-idle',
    code: 'sessionIdleMs',
    kind: 'duration',
    default: 30 * MINUTE_MS,
    help: 'an MCP session with no request under way and no stream open this long is closed: 30m, 90s',
    bound: 'an idle MCP session',
  },
  {
    flag: 'max-sessions',
    code: 'maxSessions',
    kind: 'count',
    default: 1000,
    help: 'most MCP sessions held at once; at the cap the least recently used idle one is closed, and when all are in use a new one is refused',
    bound: 'MCP 2025 sessions (at the cap the least recently used idle one is closed; all in use: 503 `session-cap`)',
  },
  {
    flag: 'max-listens',
    code: 'maxListens',
    kind: 'count',
    default: 1024,
    help: 'most MCP 2026-07-28 listen streams open at once; one more is refused',
    bound: 'MCP 2026-07-28 listen streams',
  },
  {
    flag: 'max-event-streams',
    code: 'maxEventStreams',
    kind: 'count',
    default: 1024,
    help: 'most GET /events and GET /figures/events streams open at once, together; one more is refused with 503 event-stream-cap',
    bound: '`GET /events` and `GET /figures/events` streams together (one more: 503 `event-stream-cap`)',
  },
  {
    flag: 'mcp-max-body',
    code: 'mcpMaxBody',
    kind: 'size',
    default: 4 * MIB,
    help: "largest request body /mcp accepts; a tool's arguments and a little framing",
    bound: 'a request body on `/mcp`',
  },
  {
    flag: 'mcp-fast-path',
    code: 'mcpFastPath',
    kind: 'boolean',
    default: true,
    help: "/mcp's measured fast path and its routing; false sends every /mcp request through the MCP SDK, to compare",
  },
  {
    flag: 'headers-timeout',
    code: 'headersTimeoutMs',
    kind: 'duration',
    default: 10 * SECOND_MS,
    help: "how long a connection may take to send a request's headers, or sit idle between requests",
    bound: "a connection's request head (then 408)",
  },
  {
    flag: 'request-timeout',
    code: 'requestTimeoutMs',
    kind: 'duration',
    default: 2 * MINUTE_MS,
    help: 'how long a connection may take to send a whole request, body included; answers may take longer',
    bound: "a connection's whole request (then 408)",
  },
  {
    flag: 'shutdown-grace',
    code: 'shutdownGraceMs',
    kind: 'duration',
    default: 10 * SECOND_MS,
    help: 'on SIGTERM, how long calls and requests under way may take to finish before they are stopped;\na second SIGTERM or SIGINT meanwhile exits at once (143 or 130)',
    bound: 'what is under way at SIGTERM',
  },
] as const satisfies readonly Setting[];

export type Settings = typeof SETTINGS;
export type SettingRow = Settings[number];
/** The rows a deploy may set for one harness. */
export type HarnessSettingRow = Extract<SettingRow, { harness: object }>;
/** A per-harness limit's name on the wire. */
export type LimitName = HarnessSettingRow['harness']['wire'];
/** A per-harness limit's name in code (the daemon's and the runtime's). */
export type LimitCode = HarnessSettingRow['code'];

/** The rows a deploy may set for one harness, in the order the deploy query lists them. */
export const HARNESS_SETTINGS: readonly HarnessSettingRow[] = SETTINGS.filter((row): row is HarnessSettingRow => 'harness' in row);

/** The row whose flag is `flag`. */
export function settingByFlag(flag: string): Setting | undefined {
  return (SETTINGS as readonly Setting[]).find((row) => row.flag === flag);
}

/** `1 MiB`, `64 KiB`, `1,000 bytes`: a size for prose. */
export function describeSize(bytes: number): string {
  if (bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes % KIB === 0) return `${bytes / KIB} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes`;
}
