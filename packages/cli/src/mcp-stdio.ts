/**
 * `berm mcp`'s end toward its client: messages read from stdin (as mcp-stdin.ts has let them through) and
 * written to stdout, one JSON-RPC message a line. It does what the SDK's `StdioServerTransport` did for the
 * relay, framing as the SDK's `ReadBuffer` and `serializeMessage` frame (json-rpc.ts): the SDK's stdio
 * transports and framing load the SDK with them, which came before the relay could answer its client's
 * first message.
 */
import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, LineBuffer, serializeMessage } from './json-rpc.js';

export class StdioLink {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  /** Once, when stdin ends or closes, stdout fails, or `close` is called. */
  onclose?: () => void;
  private readonly buffer = new LineBuffer();
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.buffer.append(chunk);
      for (let message = this.next(); message !== null; message = this.next()) this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e as Error);
      this.close();
    }
  };

  /** The next whole message read; one that is not a message is reported and passed over. */
  private next(): JSONRPCMessage | null {
    for (;;) {
      try {
        return this.buffer.readMessage();
      } catch (e) {
        this.onerror?.(e as Error);
      }
    }
  }

  private readonly onInputError = (e: Error): void => this.onerror?.(e);

  private readonly onEnd = (): void => this.close();

  // Stays on stdout after close: a write that fails late has nowhere to be reported, and must not crash.
  private readonly onOutputError = (e: Error): void => {
    if (this.closed) return;
    this.onerror?.(e);
    this.close();
  };

  start(): void {
    if (this.input.readableEnded || this.input.destroyed) setImmediate(this.onEnd);
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
    this.output.on('error', this.onOutputError);
  }

  /** Writes `message`; resolves once written (after a drain when stdout is full), rejects with stdout's error. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('stdout is closed'));
    return new Promise((resolve, reject) => {
      const failed = (e: Error): void => {
        this.output.off('drain', drained);
        reject(e);
      };
      const drained = (): void => {
        this.output.off('error', failed);
        resolve();
      };
      this.output.once('error', failed);
      if (this.output.write(serializeMessage(message))) drained();
      else this.output.once('drain', drained);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.buffer.clear();
    this.onclose?.();
  }
}
