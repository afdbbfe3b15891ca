/**
 * What `berm mcp` reads from its client, one JSON-RPC message a line, before its stdio link (mcp-stdio.ts)
 * reads it. That link, as the SDK's stdio transport it replaced, drops a line that is not JSON without a
 * word, and reports one that is JSON but not JSON-RPC only to the relay: either way the client would
 * wait for an answer that never comes. JSON-RPC asks for one (`-32700` parse error, `-32600` invalid
 * request), so such a line is answered here and kept from the link; every other line goes through as it
 * came. Lines are read as the link reads them (UTF-8, LF or CRLF, json-rpc.ts deciding what is a message,
 * by the SDK's schema) and bounded as the SDK's transport bounds them: a longer line is an error, which
 * ends the stream.
 */
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { INVALID_REQUEST, isJSONRPCMessage, type JSONRPCErrorResponse, MAX_LINE, PARSE_ERROR, type RequestId } from './json-rpc.js';

/** The answer to a line that is not a JSON-RPC message; undefined for one that is. */
export function refusalOf(line: string): JSONRPCErrorResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // No id can be read from it; MCP's schema leaves the id out where JSON-RPC's would write null.
    return {
      jsonrpc: '2.0',
      error: { code: PARSE_ERROR, message: 'Parse error: a line on stdin is not JSON; berm mcp reads one JSON-RPC message a line' },
    };
  }
  if (isJSONRPCMessage(value)) return undefined;
  const id = idOf(value);
  return {
    jsonrpc: '2.0',
    ...(id === undefined ? {} : { id }),
    error: {
      code: INVALID_REQUEST,
      message: 'Invalid Request: a line on stdin is JSON but not a JSON-RPC 2.0 request, notification or response',
    },
  };
}

/** The id of a message that is not JSON-RPC, when it has one a JSON-RPC id could be: the client waits on it. */
function idOf(value: unknown): RequestId | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined;
}

export class JsonRpcLines extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  /** `refuse` sends the answer to a line that is not a message. */
  constructor(
    private readonly refuse: (answer: JSONRPCErrorResponse) => void,
    private readonly maxLine = MAX_LINE,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending += this.decoder.write(chunk);
    let start = 0;
    for (let end = this.pending.indexOf('\n'); end !== -1; end = this.pending.indexOf('\n', start)) {
      this.line(this.pending.slice(start, end));
      start = end + 1;
    }
    this.pending = this.pending.slice(start);
    if (this.pending.length > this.maxLine) {
      callback(new Error(`a line of more than ${this.maxLine} characters on stdin; a message is one line`));
      return;
    }
    callback();
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // A blank line carries no message to answer.
    if (line.trim() === '') return;
    const refusal = refusalOf(line);
    if (refusal === undefined) this.push(`${line}\n`);
    else this.refuse(refusal);
  }
}
