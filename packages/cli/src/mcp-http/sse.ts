/**
 * Server-Sent Events as MCP's Streamable HTTP sends them, read a chunk at a time: an event is its `data:`
 * lines joined, dispatched at a blank line, with its `event:` type; `id:` and `retry:` are read and not
 * used (neither `berm mcp` nor `berm call` resumes a stream), comments and other fields passed over. Lines
 * end with LF, CRLF or CR; a byte order mark at the start is dropped; an event the stream ends in the
 * middle of is not dispatched. These are the format's rules, as the `eventsource-parser` the MCP SDK
 * reads with follows them.
 */
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The event's type, when it names one (MCP's messages name none, or `message`). */
  event?: string;
  data: string;
}

export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private first = true;
  /** A CR ended the last chunk: an LF starting the next ends no second line. */
  private afterCr = false;
  private data: string[] = [];
  private event?: string;

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  /** Reads `chunk`, dispatching each event it completes. */
  write(chunk: Buffer | string): void {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text === '') return;
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = false;
    this.pending += text;
    let start = 0;
    for (let end = this.lineEnd(start); end !== -1; end = this.lineEnd(start)) {
      this.line(this.pending.slice(start, end));
      const cr = this.pending.charCodeAt(end) === 13;
      if (cr && end + 1 === this.pending.length) this.afterCr = true;
      start = end + (cr && this.pending.charCodeAt(end + 1) === 10 ? 2 : 1);
    }
    this.pending = this.pending.slice(start);
  }

  /** The body has ended: its last event is dispatched even without its blank line (a whole body is read so; a stream is not). */
  end(): void {
    if (this.pending !== '') this.line(this.pending);
    this.pending = '';
    this.line('');
  }

  private lineEnd(from: number): number {
    const lf = this.pending.indexOf('\n', from);
    const cr = this.pending.indexOf('\r', from);
    if (cr === -1) return lf;
    return lf === -1 ? cr : Math.min(cr, lf);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onEvent({ ...(this.event === undefined ? {} : { event: this.event }), data: this.data.join('\n') });
      this.data = [];
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value === '' ? undefined : value;
  }
}

/** The events of a whole body. */
export function eventsOf(body: string): SseEvent[] {
  const events: SseEvent[] = [];
  const reader = new SseReader((event) => events.push(event));
  reader.write(body);
  reader.end();
  return events;
}
