/**
 * Where bermd's traces go and which are kept, read from OpenTelemetry's standard variables and the
 * `--otel-...` flags named after them (a flag wins over its variable, and over the traces-only variable
 * too: the command line is the operator's last word). No endpoint, or `OTEL_SDK_DISABLED=true`: no
 * traces at all, and nothing of the SDK's trace side is loaded.
 */

/** The OTLP/HTTP encodings bermd sends in. */
export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

/** The samplers of `OTEL_TRACES_SAMPLER` bermd builds. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** The flags' values, as the daemon's options hold them (undefined: not given). */
export interface TraceFlags {
  otelExporterOtlpEndpoint?: string;
  otelExporterOtlpProtocol?: string;
  otelServiceName?: string;
  otelTracesSampler?: string;
  otelTracesSamplerArg?: string;
  otelRecordContent?: boolean;
}

export interface TraceConfig {
  /** The traces' URL (`.../v1/traces` for a base endpoint). */
  url: string;
  /** The URL's origin, as the log may show it. */
  origin: string;
  protocol: TraceProtocol;
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, decoded. */
  resource: Record<string, string>;
  sampler: TraceSamplerName;
  /** The ratio of a `traceidratio` sampler. */
  ratio: number;
  /** The batch processor's delay (`OTEL_BSP_SCHEDULE_DELAY`), when set. */
  scheduleDelayMs?: number;
  /** Tools' arguments and results are recorded on their spans (`--otel-record-content`). */
  recordContent: boolean;
}

/** A setting that cannot be read: bermd refuses to start, naming it. */
export class TraceConfigError extends Error {
  readonly code = 'bad-option';
  constructor(message: string) {
    super(message);
    this.name = 'TraceConfigError';
  }
}

function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** `key=value,key=value`, percent-encoded as the specification says; a malformed pair is refused. */
export function resourceAttributes(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (given(text) === undefined) return out;
  for (const pair of text!.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new TraceConfigError(`OTEL_RESOURCE_ATTRIBUTES: "${pair}" is not key=value; separate pairs with commas`);
    try {
      out[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw new TraceConfigError(`OTEL_RESOURCE_ATTRIBUTES: "${pair}" is not percent-encoded correctly`);
    }
  }
  return out;
}

function endpoint(flags: TraceFlags, env: NodeJS.ProcessEnv): { url: string; where: string } | undefined {
  const base = (text: string) => `${text.replace(/\/+$/, '')}/v1/traces`;
  const flag = given(flags.otelExporterOtlpEndpoint);
  if (flag !== undefined) return { url: base(flag), where: '--otel-exporter-otlp-endpoint' };
  const traces = given(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces !== undefined) return { url: traces, where: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' };
  const general = given(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (general !== undefined) return { url: base(general), where: 'OTEL_EXPORTER_OTLP_ENDPOINT' };
  return undefined;
}

function pick(flags: TraceFlags, env: NodeJS.ProcessEnv, flag: keyof TraceFlags, names: string[]): { value?: string; where: string } {
  const fromFlag = given(flags[flag] as string | undefined);
  const flagName = `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (fromFlag !== undefined) return { value: fromFlag, where: flagName };
  for (const name of names) {
    const value = given(env[name]);
    if (value !== undefined) return { value, where: name };
  }
  return { where: flagName };
}

/** What the flags and the environment ask of traces; undefined when traces are off. Throws `TraceConfigError`. */
export function traceConfig(flags: TraceFlags, env: NodeJS.ProcessEnv): TraceConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const target = endpoint(flags, env);
  if (target === undefined) return undefined;
  let origin: string;
  try {
    const url = new URL(target.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    origin = url.origin;
  } catch {
    throw new TraceConfigError(`${target.where}: "${target.url}" is not an http: or https: URL; give the collector's OTLP/HTTP address`);
  }
  const protocol = pick(flags, env, 'otelExporterOtlpProtocol', ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']);
  const proto = protocol.value ?? 'http/protobuf';
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(proto))
    throw new TraceConfigError(`${protocol.where}: "${proto}" is not served by bermd; use ${TRACE_PROTOCOLS.join(' or ')}`);
  const sampler = pick(flags, env, 'otelTracesSampler', ['OTEL_TRACES_SAMPLER']);
  const samplerName = sampler.value ?? 'parentbased_always_on';
  if (!(TRACE_SAMPLERS as readonly string[]).includes(samplerName))
    throw new TraceConfigError(`${sampler.where}: "${samplerName}" is not a sampler bermd knows; use one of ${TRACE_SAMPLERS.join(', ')}`);
  const arg = pick(flags, env, 'otelTracesSamplerArg', ['OTEL_TRACES_SAMPLER_ARG']);
  const ratio = arg.value === undefined ? 1 : Number(arg.value);
  if (samplerName.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1))
    throw new TraceConfigError(`${arg.where}: "${arg.value}" is not a ratio; give a number from 0 to 1`);
  const resource = resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES);
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return {
    url: target.url,
    origin,
    protocol: proto as TraceProtocol,
    serviceName: given(flags.otelServiceName) ?? given(env.OTEL_SERVICE_NAME) ?? resource['service.name'] ?? 'bermd',
    resource,
    sampler: samplerName as TraceSamplerName,
    ratio,
    scheduleDelayMs: Number.isFinite(delay) && delay >= 0 && env.OTEL_BSP_SCHEDULE_DELAY?.trim() !== '' ? delay : undefined,
    recordContent: flags.otelRecordContent === true,
  };
}
