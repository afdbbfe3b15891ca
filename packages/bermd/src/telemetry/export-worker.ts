/**
 * The thread bermd's traces are sent from (export-thread.ts starts it): each batch's request, already
 * serialized, goes to the collector through the SDK's OTLP/HTTP export delegate, configured as the
 * SDK's own trace exporter configures it, from the same environment; its outcome goes back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ExportReply, ExportRequest, ExportThreadData } from './export-thread.js';

const { url, protocol } = workerData as ExportThreadData;
const json = protocol === 'http/json';
const options = convertLegacyHttpOptions({ url }, 'TRACES', 'v1/traces', {
  'Content-Type': json ? 'application/json' : 'application/x-protobuf',
});
const answers = json ? JsonTraceSerializer : ProtobufTraceSerializer;
const delegate = createOtlpHttpExportDelegate(
  options,
  { serializeRequest: (request: ExportRequest) => request.body, deserializeResponse: (data) => answers.deserializeResponse(data) },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (request) => request.spans },
  undefined,
);

/** An export's error as the main thread is told it: its message, and the collector's status when it answered one. */
function described(error: (Error & { code?: unknown }) | undefined): string {
  if (error === undefined) return 'the export failed';
  return typeof error.code === 'number' ? `${error.message} (status ${error.code})` : error.message;
}

const port = parentPort!;
port.on('message', (request: ExportRequest) => {
  delegate.export(request, (result) => {
    const reply: ExportReply = { id: request.id, ok: result.code === ExportResultCode.SUCCESS };
    if (!reply.ok) reply.error = described(result.error);
    port.postMessage(reply);
  });
});
