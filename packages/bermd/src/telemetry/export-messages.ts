/** What bermd's main thread and its span export thread (export-thread.ts, export-worker.ts) say to each other. */
import type { Attributes } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { SpanRecord } from './span-record.js';
import type { TraceConfig } from './trace-config.js';

/** The export thread's `workerData`: where to export, and what every span is of. */
export interface ExportSetup {
  config: TraceConfig;
  resource: Attributes;
  scope: InstrumentationScope;
}

export type ToExporter =
  | { kind: 'spans'; spans: SpanRecord[] }
  /** Export every span sent so far, then answer `done` with the same id. */
  | { kind: 'flush'; id: number }
  /** Export every span sent so far, stop the exporter, then answer `done` with the same id. */
  | { kind: 'shutdown'; id: number };

export type FromExporter = { kind: 'ready' } | { kind: 'done'; id: number };
