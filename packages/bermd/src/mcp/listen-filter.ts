/**
 * The list changes a 2026-07-28 `subscriptions/listen` stream carries, kept to those its principal may
 * see. The SDK's listen router writes every change published on its bus to every stream that asked for
 * that kind, and its bus knows nothing of who opened a stream; so each change is published with the
 * harnesses it touched in its `_meta` (`HARNESSES_META_KEY`), and the stream's frames pass through a
 * `ListenFilter` on their way out (stateless.ts): a change of none of the principal's harnesses is
 * dropped, and the names are taken out of the others, so a client never reads them.
 */
import type { ServerEvent } from '@modelcontextprotocol/server';
import type { Caller } from '../runtime/index.js';
import { mayCallSome } from './access.js';

export const HARNESSES_META_KEY = 'berm/harnesses';

/** A list change of `kind` touching `harnesses`, for the bus. */
export function changeEvent(
  kind: 'tools_list_changed' | 'resources_list_changed' | 'prompts_list_changed',
  harnesses: ReadonlySet<string>,
): ServerEvent {
  return { kind, params: { _meta: { [HARNESSES_META_KEY]: [...harnesses] } } };
}

const FRAME_END = '\n\n';

/** One listen stream's frames, as its principal may read them. */
export class ListenFilter {
  private readonly decoder = new TextDecoder();
  /** The start of a frame whose end has not come yet. */
  private pending = '';

  constructor(private readonly caller: Caller) {}

  /** What of `chunk` goes out now: whole frames only, each kept, cleaned or dropped. */
  pass(chunk: Uint8Array): string {
    this.pending += this.decoder.decode(chunk, { stream: true });
    const end = this.pending.lastIndexOf(FRAME_END);
    if (end < 0) return '';
    const whole = this.pending.slice(0, end + FRAME_END.length);
    this.pending = this.pending.slice(end + FRAME_END.length);
    // Keep-alive comments and the acknowledgement pass as they are.
    if (!whole.includes(HARNESSES_META_KEY)) return whole;
    let out = '';
    for (const frame of whole.split(FRAME_END)) if (frame !== '') out += this.frame(frame);
    return out;
  }

  /** A frame (without its blank line) as it goes out, or '' when its principal may not see it. */
  private frame(frame: string): string {
    const lines = frame.split('\n');
    const at = lines.findIndex((line) => line.startsWith('data: '));
    if (at < 0) return `${frame}${FRAME_END}`;
    let message: { params?: { _meta?: Record<string, unknown> } };
    try {
      message = JSON.parse(lines[at]!.slice('data: '.length)) as typeof message;
    } catch {
      return `${frame}${FRAME_END}`;
    }
    const meta = message.params?._meta;
    const harnesses = meta?.[HARNESSES_META_KEY];
    if (meta === undefined || !Array.isArray(harnesses)) return `${frame}${FRAME_END}`;
    if (
      !mayCallSome(
        this.caller,
        harnesses.filter((h): h is string => typeof h === 'string'),
      )
    )
      return '';
    delete meta[HARNESSES_META_KEY];
    lines[at] = `data: ${JSON.stringify(message)}`;
    return `${lines.join('\n')}${FRAME_END}`;
  }
}
