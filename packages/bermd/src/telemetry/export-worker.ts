/**
 * bermd's span export thread: the SDK's batch processor and OTLP exporter, fed with the spans bermd's main
 * thread ends (export-thread.ts says why they run here).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExportSetup, FromExporter, ToExporter } from './export-messages.js';
import { readableOf } from './span-record.js';
import type { TraceConfig } from './trace-config.js';

/** The exporter of `config.protocol`, its package imported now: a bermd without traces never loads one. */
async function exporterOf(config: TraceConfig): Promise<SpanExporter> {
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: config.url });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: config.url });
}

const port = parentPort!;
const { config, resource: attributes, scope } = workerData as ExportSetup;
const resource = resourceFromAttributes(attributes);
const processor = new BatchSpanProcessor(
  await exporterOf(config),
  config.scheduleDelayMs === undefined ? {} : { scheduledDelayMillis: config.scheduleDelayMs },
);
const answer = (message: FromExporter): void => port.postMessage(message);

port.on('message', (message: ToExporter) => {
  switch (message.kind) {
    case 'spans':
      for (const record of message.spans) processor.onEnd(readableOf(record, resource, scope));
      break;
    case 'flush':
      processor.forceFlush().finally(() => answer({ kind: 'done', id: message.id }));
      break;
    case 'shutdown':
      processor.shutdown().finally(() => {
        answer({ kind: 'done', id: message.id });
        port.close();
      });
      break;
  }
});
answer({ kind: 'ready' });
