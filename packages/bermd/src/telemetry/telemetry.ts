/**
 * bermd's meter and where what it records goes: always to a pull reader that `/metrics` reads, and over
 * OTLP/HTTP when the environment names a collector (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, the exporter reading its headers and the rest from the
 * environment too), by default sending what the pull reader collects, and with it what bermd's own
 * instruments keep (call-instruments.ts). `OTEL_SDK_DISABLED=true` turns it all off: nothing is recorded,
 * `/metrics` says so.
 *
 * A tracer is one more provider beside this one, made here from the same resource; the rooms receive
 * what they record through, never the SDK.
 */
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { millisToHrTime } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  type CollectionResult,
  type MetricCollectOptions,
  MeterProvider,
  type MetricReader,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BermdMetrics, type GaugeSources } from './metrics.js';

/** The OTLP export's interval when `OTEL_METRIC_EXPORT_INTERVAL` does not say: the SDK's default. */
const DEFAULT_EXPORT_INTERVAL_MS = 60_000;

/**
 * Whether the OTLP push may send what the pull reader collects rather than keep its own storage: it may
 * when its exporter asks for what the pull reader keeps, cumulative sums and explicit-bucket histograms
 * (the exporter's defaults). The SDK keeps a storage per reader, so with two every record is hashed and
 * kept twice; with one read by both, once (docs/decisions.md). bermd's own instruments, which keep
 * cumulative sums and explicit buckets only, serve exactly when this holds (call-instruments.ts).
 */
function pushReadsPull(env: NodeJS.ProcessEnv): boolean {
  const temporality = env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE?.trim().toLowerCase() ?? '';
  const histogram = env.OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION?.trim().toLowerCase() ?? '';
  return (temporality === '' || temporality === 'cumulative') && (histogram === '' || histogram === 'explicit_bucket_histogram');
}

export interface TelemetryOptions {
  version: string;
  sources: GaugeSources;
  env?: NodeJS.ProcessEnv;
}

/** Where metrics are exported to over OTLP, as the log may show it: the endpoint's origin, never its path's secrets or credentials. */
export function otlpTarget(env: NodeJS.ProcessEnv): string | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || endpoint === '') return undefined;
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'an endpoint that is not a URL';
  }
}

export function telemetryDisabled(env: NodeJS.ProcessEnv): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}

export class Telemetry {
  readonly metrics: BermdMetrics;
  /** Where OTLP export goes (its origin), when it does. */
  readonly otlp?: string;
  private readonly provider: MeterProvider;
  /** The OTLP push reader's own provider, holding no instrument, when the push sends what the pull collects. */
  private readonly pushProvider?: MeterProvider;
  /**
   * The Prometheus exporter as a pull reader only: its own HTTP server is never started, since /metrics is
   * served on bermd's listeners, through their Host checks and tokens. It is read with `collect` and
   * written with the exporter's serializer, which is what its own server does.
   */
  private readonly pull: PrometheusExporter;
  private readonly serializer = new PrometheusSerializer();
  /** The meter's instrumentation scope, which bermd's own instruments are collected under too. */
  private readonly scope: { name: string; version: string };

  /**
   * The meter and its readers. The OTLP exporter is imported only when the environment names a collector:
   * it and what it brings are a share of every start that most bermds do not use (docs/decisions.md).
   */
  static async create(options: TelemetryOptions): Promise<Telemetry> {
    const env = options.env ?? process.env;
    const otlp = otlpTarget(env);
    if (otlp === undefined) return new Telemetry(options, env);
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    return new Telemetry(options, env, { target: otlp, exporter: new OTLPMetricExporter() });
  }

  private constructor(options: TelemetryOptions, env: NodeJS.ProcessEnv, otlp?: { target: string; exporter: PushMetricExporter }) {
    this.pull = new PrometheusExporter({ preventServerStart: true });
    this.scope = { name: 'bermd', version: options.version };
    const readers: MetricReader[] = [this.pull];
    const resource = resourceFromAttributes({
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || 'bermd',
      [ATTR_SERVICE_VERSION]: options.version,
    });
    this.otlp = otlp?.target;
    const onePull = otlp === undefined || pushReadsPull(env);
    if (otlp !== undefined) {
      const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
      const exportIntervalMillis = Number.isInteger(interval) && interval > 0 ? interval : DEFAULT_EXPORT_INTERVAL_MS;
      if (onePull) {
        // The push reader's own collection is empty; what it sends comes from the pull reader, as a producer.
        const push = new PeriodicExportingMetricReader({
          exporter: otlp.exporter,
          exportIntervalMillis,
          metricProducers: [{ collect: (collectOptions) => this.collect(collectOptions) }],
        });
        this.pushProvider = new MeterProvider({ resource, readers: [push] });
      } else readers.push(new PeriodicExportingMetricReader({ exporter: otlp.exporter, exportIntervalMillis }));
    }
    this.provider = new MeterProvider({ resource, readers });
    this.metrics = new BermdMetrics(this.provider.getMeter(this.scope.name, this.scope.version), options.sources, onePull);
  }

  /** Every metric now, in Prometheus' text format. */
  async prometheusText(): Promise<string> {
    const { resourceMetrics } = await this.collect();
    return this.serializer.serialize(resourceMetrics);
  }

  /** What the pull reader collects from the meter, with what bermd keeps itself in the meter's scope. */
  private async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const result = await this.pull.collect(options);
    const own = this.metrics.ownData(millisToHrTime(Date.now()));
    if (own.length === 0) return result;
    const scopes = result.resourceMetrics.scopeMetrics;
    const scope = scopes.find((s) => s.scope.name === this.scope.name);
    if (scope === undefined) scopes.push({ scope: this.scope, metrics: own });
    else scope.metrics.push(...own);
    return result;
  }

  /** Sends what is left to the OTLP collector, if any, and stops: the push first, since it may read the pull. */
  async close(): Promise<void> {
    await this.pushProvider?.shutdown().catch(() => {});
    await this.provider.shutdown().catch(() => {});
  }
}
