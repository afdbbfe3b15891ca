/**
 * The state `berm mcp`'s relay (mcp-bridge.ts) keeps, each part named for what it holds: where it
 * stands with bermd, the client's 2025 session as it is replayed, the handshake under way, and the
 * requests the relay sends of its own accord.
 */
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from './json-rpc.js';
import type { McpHttpTransport } from './mcp-http/transport.js';

/**
 * Where the relay stands with bermd: `reachable`, bermd answered the last send; `lost`, it went away
 * (said once; what the client had there is being restored); `closed`, the client has gone, for good.
 */
export type Link = 'reachable' | 'lost' | 'closed';

/** What opens the client's 2025 session anew on bermd: its own messages, replayed. */
export interface SessionReplay {
  /** The client's `initialize`, once bermd accepted it; while there is none, there is no session to restore. */
  accepted?: JSONRPCRequest;
  /** Whether the client has sent `notifications/initialized`. */
  initializedNotified: boolean;
  /** The client's last `logging/setLevel`. */
  logLevel?: JSONRPCRequest;
}

/**
 * The client's `initialize` while bermd has not answered it. What the client sends next waits for
 * `answered`: it belongs to the session being opened.
 */
export interface Handshake {
  request: JSONRPCRequest;
  answered: Promise<void>;
  /** Lets what waits go on: bermd answered, or the request could not be sent. */
  end(): void;
}

/** A promise and what resolves it (Promise.withResolvers, which Node 20 lacks). */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The requests the relay sends of its own accord (a session's replay): their answers are the relay's, never the client's. */
export class OwnRequests {
  private sent = 0;
  private readonly waiting = new Map<RequestId, (answer: JSONRPCMessage) => void>();

  /** Sends `request` on `transport` under an id of the relay's own, never a client's; resolves with bermd's answer. */
  async ask(transport: McpHttpTransport, request: JSONRPCRequest): Promise<JSONRPCMessage> {
    const id = `berm-mcp-${++this.sent}`;
    const answered = new Promise<JSONRPCMessage>((resolve) => this.waiting.set(id, resolve));
    await transport.send({ ...request, id });
    return answered;
  }

  /** Hands `answer` to the relay's request `id`; false when the relay sent none under it (the answer is the client's). */
  settle(id: RequestId, answer: JSONRPCMessage): boolean {
    const resolve = this.waiting.get(id);
    if (resolve === undefined) return false;
    this.waiting.delete(id);
    resolve(answer);
    return true;
  }
}
