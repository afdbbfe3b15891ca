/**
 * JSON-RPC messages as MCP's schema admits them, for `berm mcp`'s relay and `berm call`: which value is a
 * request, a notification, a result or an error, and the line framing of stdio. The rules are the MCP
 * SDK's schemas' (`JSONRPCMessageSchema` and its four parts), written out: a message has exactly its
 * members, `jsonrpc` is "2.0", an id is a string or a safe integer, `params` and `_meta` are objects, a
 * `progressToken` is an id's kind, an error's code a safe integer and its message a string. Those schemas
 * are zod's, and loading them (zod and the SDK that holds them) is most of what the relay took to start;
 * `test/json-rpc.test.ts` holds these guards to the SDK's on many values.
 *
 * Unlike the SDK's parse, a message is checked and passed on as it came: nothing is stripped from it or
 * reordered in it, so what a client or bermd wrote is what the other end reads.
 */
import type {
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
  RequestId,
} from '@modelcontextprotocol/client';

export type { JSONRPCErrorResponse, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse, RequestId };

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** The longest line a stdio transport of the SDK buffers (10 MiB). */
export const MAX_LINE = 10 * 1024 * 1024;

/** MCP's `_meta` keys the relay and `berm call` read or write (the SDK's `*_META_KEY` constants). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  relatedTask: 'io.modelcontextprotocol/related-task',
} as const;

type Members = Record<string, unknown>;

function isObject(value: unknown): value is Members {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether `value` has no member outside `allowed`. */
function only(value: Members, allowed: readonly string[]): boolean {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) return false;
  return true;
}

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/** A request's or notification's `_meta`: an object, whose progress token is an id's kind and whose related task names its id. */
function isRequestMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) return false;
  const task = meta[META.relatedTask];
  return task === undefined || (isObject(task) && typeof task.taskId === 'string');
}

function isParams(params: unknown): boolean {
  return params === undefined || (isObject(params) && isRequestMeta(params._meta));
}

const REQUEST = ['jsonrpc', 'id', 'method', 'params'] as const;
const NOTIFICATION = ['jsonrpc', 'method', 'params'] as const;
const RESULT = ['jsonrpc', 'id', 'result'] as const;
const ERROR = ['jsonrpc', 'id', 'error'] as const;

export function isJSONRPCRequest(value: unknown): value is JSONRPCRequest {
  return (
    isObject(value) &&
    only(value, REQUEST) &&
    value.jsonrpc === '2.0' &&
    isRequestId(value.id) &&
    typeof value.method === 'string' &&
    isParams(value.params)
  );
}

export function isJSONRPCNotification(value: unknown): value is JSONRPCNotification {
  return (
    isObject(value) && only(value, NOTIFICATION) && value.jsonrpc === '2.0' && typeof value.method === 'string' && isParams(value.params)
  );
}

export function isJSONRPCResultResponse(value: unknown): value is JSONRPCResultResponse {
  if (!isObject(value) || !only(value, RESULT) || value.jsonrpc !== '2.0' || !isRequestId(value.id)) return false;
  const { result } = value;
  // A result's `_meta` is any object: the SDK reads its server info leniently.
  return isObject(result) && (result._meta === undefined || isObject(result._meta));
}

export function isJSONRPCErrorResponse(value: unknown): value is JSONRPCErrorResponse {
  if (!isObject(value) || !only(value, ERROR) || value.jsonrpc !== '2.0') return false;
  if (value.id !== undefined && !isRequestId(value.id)) return false;
  const { error } = value;
  return isObject(error) && Number.isSafeInteger(error.code) && typeof error.message === 'string';
}

export function isJSONRPCMessage(value: unknown): value is JSONRPCMessage {
  return isJSONRPCRequest(value) || isJSONRPCNotification(value) || isJSONRPCResultResponse(value) || isJSONRPCErrorResponse(value);
}

/** A line's message. Throws a `SyntaxError` for a line that is not JSON, a `TypeError` for JSON that is no message. */
export function parseMessage(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  if (!isJSONRPCMessage(value)) throw new TypeError('not a JSON-RPC 2.0 request, notification or response');
  return value;
}

/** A message as stdio carries it: its JSON on one line. */
export function serializeMessage(message: JSONRPCMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * A stream of bytes cut into messages, a line each (LF, or CRLF), as the SDK's stdio `ReadBuffer` cuts it:
 * a line that is not JSON is passed over, one that is JSON but no message throws (and the next read goes
 * on after it), and more than `max` bytes held at once throws and empties the buffer.
 */
export class LineBuffer {
  private held?: Buffer;

  constructor(private readonly max = MAX_LINE) {}

  append(chunk: Buffer): void {
    if ((this.held?.length ?? 0) + chunk.length > this.max) {
      this.clear();
      throw new Error(`more than ${this.max} bytes of stdin held without a line's end`);
    }
    this.held = this.held === undefined ? chunk : Buffer.concat([this.held, chunk]);
  }

  /** The next whole line's message; null until a line is whole. */
  readMessage(): JSONRPCMessage | null {
    while (this.held !== undefined) {
      const end = this.held.indexOf(10);
      if (end === -1) return null;
      const line = this.held.toString('utf8', 0, end).replace(/\r$/, '');
      this.held = this.held.subarray(end + 1);
      try {
        return parseMessage(line);
      } catch (e) {
        if (e instanceof SyntaxError) continue;
        throw e;
      }
    }
    return null;
  }

  clear(): void {
    this.held = undefined;
  }
}
