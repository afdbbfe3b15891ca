/**
 * The 2025-era MCP sessions of one bermd (2025-11-25 and older: `initialize`, then `mcp-session-id` on
 * every request): one Streamable HTTP transport and one server per session, keyed by session id, and
 * what reaches every session at once (list changes, events). 2026-07-28 clients have no session
 * (stateless.ts).
 *
 * Server-initiated messages travel on a session's GET stream, which the client opens after
 * initializing and may drop and reopen. A list change that finds no stream open is remembered (as a
 * flag, so nothing grows) and sent when the stream opens: a client never keeps a stale list because
 * its stream was reconnecting when a harness was deployed. Log messages are not kept: they are news.
 *
 * A session belongs to the principal that opened it: a request naming it with another principal's token
 * is answered as if the session did not exist (plugin.ts). What it is sent unasked concerns the harnesses
 * its principal may call: a change of another harness, or another's event, is not sent to it.
 */
import { randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import { SSE_KEEP_ALIVE_MS } from '../app/index.js';
import type { Caller, Stop } from '../runtime/index.js';
import { mayCallSome } from './access.js';
import type { FastCallSession, RequestId } from './fast-call.js';
import { buildMcpServer, wantsLog, type EventMessage, type McpCore, type SessionState } from './server.js';
import { numberDefault } from '../limits.js';

/**
 * A session with no request under way and no stream open for this long is closed, so clients that vanish
 * without a DELETE do not pile up (the default of `--session-idle`).
 */
export const SESSION_IDLE_MS = numberDefault('session-idle');
/** How often idle sessions are looked for; more often when the idle time is shorter. */
const SWEEP_MS = 60 * 1000;
/**
 * The most sessions held at once (the default of `--max-sessions`). bench/soak.js measures what a session
 * costs (its transport, its server, the SDK's handlers): about 8 KB of heap and 15 KB of RSS each, so
 * 1,000 of them hold about 15 MB, where 5,000 `initialize`s without a cap kept growing bermd's RSS.
 */
export const MAX_SESSIONS = numberDefault('max-sessions');

/** `open` at the cap when no session can be let go: every one has a request under way or its stream open. */
export class SessionCapError extends Error {
  constructor(readonly cap: number) {
    super(`bermd is at its cap of ${cap} MCP sessions, all in use (--max-sessions); try again when one ends`);
    this.name = 'SessionCapError';
  }
}

export class Session implements SessionState, FastCallSession {
  level?: SessionState['level'];
  /** The name of the principal that opened it: only its requests reach it. */
  readonly owner: string;
  /** Its principal as of its latest request (a client may step up to a token with more scopes). */
  caller: Caller;
  readonly calls = new Map<RequestId, Stop>();
  readonly transport: NodeStreamableHTTPServerTransport;
  readonly server: Server;
  /** The GET stream is open: server-initiated messages can be sent now. */
  streamOpen = false;
  toolsChanged = false;
  resourcesChanged = false;
  /** Requests being handled (a POST holds its response stream until its answer is sent). */
  active = 0;
  lastSeen = Date.now();
  /** When it was made (performance.now()), for its duration. */
  readonly opened = performance.now();

  constructor(core: McpCore, caller: Caller, onInitialized: (session: Session) => void, onClosed: (session: Session) => void) {
    this.owner = caller.name;
    this.caller = caller;
    this.transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      keepAliveMs: core.keepAliveMs ?? SSE_KEEP_ALIVE_MS,
      onsessioninitialized: () => onInitialized(this),
    });
    // The SDK's server aborts its own handlers when its transport closes; the fast path's calls stop too.
    this.transport.onclose = () => {
      for (const call of this.calls.values()) call.abort();
      onClosed(this);
    };
    this.server = buildMcpServer(core, this);
  }

  get id(): string | undefined {
    return this.transport.sessionId;
  }

  get state(): SessionState {
    return this;
  }
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  /**
   * Sessions whose `initialize` is accepted and not yet answered: they have no id yet, and count toward
   * the cap all the same, or a burst of `initialize`s would each find room before any of them had its id.
   */
  private readonly opening = new Set<Session>();
  readonly core: McpCore;
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private closing = false;

  constructor(core: McpCore, idleMs: number = SESSION_IDLE_MS, maxSessions: number = MAX_SESSIONS) {
    this.core = core;
    this.idleMs = idleMs;
    this.maxSessions = maxSessions;
    this.sweeper = setInterval(() => this.sweep(), Math.min(SWEEP_MS, idleMs));
    this.sweeper.unref();
  }

  /** The sessions held: those with an id, and those whose `initialize` is being answered. */
  get size(): number {
    return this.sessions.size + this.opening.size;
  }

  /** The session `id` names, when `caller` owns it: another principal's is as unknown as one that never was. */
  get(id: string, caller: Caller): Session | undefined {
    const session = this.sessions.get(id);
    return session?.owner === caller.name ? session : undefined;
  }

  /**
   * A session for an `initialize` request, counted from now; it joins the map once the transport has
   * given it an id. Throws `SessionCapError` at the cap when no session can make room (see `makeRoom`).
   * The caller says when the request is answered (`answered`), so one the transport refused stops counting.
   * The session belongs to `caller`.
   */
  async open(caller: Caller): Promise<Session> {
    this.makeRoom();
    const session = new Session(
      this.core,
      caller,
      (s) => {
        this.opening.delete(s);
        this.sessions.set(s.id!, s);
        this.core.logger.debug({ session: s.id, principal: s.owner, held: this.size }, 'mcp session opened');
      },
      (s) => {
        this.opening.delete(s);
        if (s.id !== undefined) this.core.metrics?.sessionEnded((performance.now() - s.opened) / 1000);
        if (s.id !== undefined && this.sessions.get(s.id) === s) this.sessions.delete(s.id);
        this.core.logger.debug({ session: s.id }, 'mcp session closed');
      },
    );
    this.opening.add(session);
    try {
      await session.server.connect(session.transport);
    } catch (e) {
      this.opening.delete(session);
      throw e;
    }
    return session;
  }

  /**
   * The `initialize` that opened `session` is answered. A session the transport started is in the map by
   * now; one it refused (a bad header, a malformed request) never will be, and is let go.
   */
  answered(session: Session): void {
    if (this.opening.delete(session)) void session.server.close();
  }

  /**
   * At the cap, the least recently used idle session (no request under way, no stream open) is closed to
   * make room: Streamable HTTP lets a server end a session at any time, and its client, answered 404,
   * starts a new one. A client that keeps its stream open, as the SDK's does, is never the one let go, so
   * a flood of `initialize`s pushes out only sessions nobody is listening on. When every session is in
   * use, the new one is refused. Sessions whose `initialize` is still being answered count, and are never
   * let go: they are in use.
   */
  private makeRoom(): void {
    while (this.size >= this.maxSessions) {
      let oldest: Session | undefined;
      for (const s of this.sessions.values()) {
        if (s.active === 0 && !s.streamOpen && (oldest === undefined || s.lastSeen < oldest.lastSeen)) oldest = s;
      }
      if (oldest === undefined) throw new SessionCapError(this.maxSessions);
      // Out of the map now, so the count drops at once; closing it ends its transport.
      this.sessions.delete(oldest.id!);
      this.core.logger.info(
        { session: oldest.id, cap: this.maxSessions },
        'closing the least recently used idle mcp session: at the session cap',
      );
      void oldest.server.close();
    }
  }

  /** The session's GET stream is open (its headers are sent): send what it missed. */
  streamOpened(session: Session): void {
    session.streamOpen = true;
    this.core.logger.debug({ session: session.id }, 'mcp notification stream opened');
    this.flush(session);
  }

  /** Sessions whose GET stream is open now: read by a scrape. */
  get streams(): number {
    let n = 0;
    for (const session of this.sessions.values()) if (session.streamOpen) n++;
    return n;
  }

  streamClosed(session: Session): void {
    session.streamOpen = false;
  }

  /**
   * Deploy and undeploy change both lists of the `harnesses` they touched: every session whose principal
   * may call one of them is told (a look-up per session and harness, once per change).
   */
  listsChanged(harnesses: ReadonlySet<string>): void {
    for (const session of this.sessions.values()) {
      if (!mayCallSome(session.caller, harnesses)) continue;
      session.toolsChanged = true;
      session.resourcesChanged = true;
      if (session.streamOpen) this.flush(session);
    }
  }

  broadcastEvent(message: EventMessage, from: SessionState): void {
    for (const session of this.sessions.values()) {
      if (session === from || !session.streamOpen || !wantsLog(session, message.level)) continue;
      // An event names its harness (`logger`): a principal that may not call it hears nothing of it.
      if (typeof message.logger !== 'string' || !session.caller.mayCall(message.logger)) continue;
      session.server.notification({ method: 'notifications/message', params: message }).catch((e: unknown) => this.lost(session, e));
    }
  }

  /** Aborts the fast-path calls of `session` that a `notifications/cancelled` names. */
  cancel(session: Session, ids: readonly RequestId[]): void {
    for (const id of ids) session.calls.get(id)?.abort();
  }

  /** Closes every session (ending their streams) and stops the idle sweep. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.sessions.values(), ...this.opening];
    await Promise.allSettled(all.map((s) => s.server.close()));
    for (const s of all) for (const call of s.calls.values()) call.abort();
    this.sessions.clear();
    this.opening.clear();
  }

  private flush(session: Session): void {
    if (session.toolsChanged) {
      session.toolsChanged = false;
      session.server.sendToolListChanged().catch((e: unknown) => this.lost(session, e));
    }
    if (session.resourcesChanged) {
      session.resourcesChanged = false;
      session.server.sendResourceListChanged().catch((e: unknown) => this.lost(session, e));
    }
  }

  private lost(session: Session, e: unknown): void {
    this.core.logger.debug({ session: session.id, err: e }, 'could not send a notification');
  }

  private sweep(): void {
    if (this.closing) return;
    const cutoff = Date.now() - this.idleMs;
    for (const session of this.sessions.values()) {
      if (session.active === 0 && !session.streamOpen && session.lastSeen < cutoff) {
        this.core.logger.info({ session: session.id }, 'closing an idle mcp session');
        void session.server.close();
      }
    }
  }
}
