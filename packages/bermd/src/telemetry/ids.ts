/**
 * Trace and span ids cut from random hex made for many ids at a time, for the tracer's spans and the
 * timed ones (timed-span.ts) alike. The SDK's `RandomIdGenerator` makes each id on its own: new
 * `Math.random` words written into a buffer, then read back as hex by a call into the runtime. A fully
 * sampled tool call makes four spans, so that was four such calls on the main thread for every call; here
 * one draw from the operating system's random source, read as hex once, serves a few hundred ids, each a
 * slice of that text.
 */
import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/** Random bytes read at a time: 256 span ids' worth. */
const POOL_BYTES = 2048;
/** An id of zeros is invalid (W3C trace context), and is drawn again. */
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export class PooledIdGenerator implements IdGenerator {
  private hex = '';
  private at = 0;

  generateTraceId(): string {
    return this.take(32, ZERO_TRACE);
  }

  generateSpanId(): string {
    return this.take(16, ZERO_SPAN);
  }

  private take(length: number, zero: string): string {
    for (;;) {
      if (this.at + length > this.hex.length) {
        this.hex = randomBytes(POOL_BYTES).toString('hex');
        this.at = 0;
      }
      const id = this.hex.slice(this.at, this.at + length);
      this.at += length;
      if (id !== zero) return id;
    }
  }
}
