/**
 * What a request to an MCP endpoint failed with, as `berm mcp`'s transport (transport.ts) throws it: no
 * answer (the socket's error is its cause), or the answer's status and body, and for a 403 whose challenge
 * says `insufficient_scope` the scope it asked for. The body is as the server gave it: whoever reads it
 * makes it printable.
 */
export class McpHttpError extends Error {
  /** The answer's status; undefined when none came (the connection failed: see `cause`). */
  readonly status?: number;
  /** The answer's body, when it had one. */
  readonly body?: string;
  /** A 403's `insufficient_scope` challenge: the scope it names, empty when it names none. */
  readonly refusedScope?: string;

  constructor(message: string, details: { status?: number; body?: string; refusedScope?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'McpHttpError';
    this.status = details.status;
    this.body = details.body;
    this.refusedScope = details.refusedScope;
  }
}
