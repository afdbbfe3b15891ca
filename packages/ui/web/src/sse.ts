/**
 * Server-Sent Events read from a fetch body. `EventSource` cannot send an Authorization header,
 * and bermd's token travels only as one; `/events` and `/mcp` answers are read this way instead.
 */

export interface SseMessage {
  event: string;
  data: string;
}

/** Yields each message of an event stream (WHATWG HTML, "Parsing an event stream") until it ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: RegExpExecArray | null;
      while ((end = /\r\n|\r|\n/.exec(buffer)) !== null) {
        // A lone CR at the end may be the first half of a CRLF still on its way.
        if (end[0] === '\r' && end.index === buffer.length - 1) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
      }
    }
  } finally {
    // Left early (the awaited message came): the rest of the stream is not wanted.
    await reader.cancel().catch(() => undefined);
  }
}
