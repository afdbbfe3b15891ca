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
 *
 * On a store replicas share (`records`, PostgreSQL), any replica serves any session: its `initialize`
 * writes a row (its principal, what the `initialize` asked, its log level), and a replica receiving a
 * request for a session it does not hold reads the row once and rebuilds the session
 * (session-restore.ts), which it then holds as if it had opened it; the steady state reads nothing. The
 * cap, the idle time and the eviction apply to the copies a replica holds; closing a copy leaves the row.
 * The row expires one idle period after the latest request anywhere (refreshed at most every half
 * period), `logging/setLevel` updates it and `DELETE /mcp` deletes it, each notified on the store's
 * channel so every replica updates or ends its copy. Without `records` (the directory store, one process)
 * nothing of this runs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import { SSE_KEEP_ALIVE_MS } from '../app/index.js';
import type { SessionInit, SessionRecords, SessionWatcher, StoredSession } from '../deploy/index.js';
import type { Caller, Stop } from '../runtime/index.js';
import { mayCallSome } from './access.js';
import type { FastCallSession, RequestId } from './fast-call.js';
import { buildMcpServer, wantsLog, type EventMessage, type McpCore, type SessionState } from './server.js';
import { resolvePath, resourceUris } from './surface.js';
import { numberDefault } from '../limits.js';
import { restoreInitialized } from './session-restore.js';

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
/** How many refused session ids a replica remembers, and at most how long (see `refused` below). */
const REFUSED_IDS = 10_000;
const REFUSED_MS = 60 * 1000;

/** `open` at the cap when no session can be let go: every one has a request under way or its stream open. */
export class SessionCapError extends Error {
  constructor(readonly cap: number) {
    super(`bermd is at its cap of ${cap} MCP sessions, all in use (--max-sessions); try again when one ends`);
    this.name = 'SessionCapError';
  }
}

/** The key a session is stored and notified by: a digest of its id, which names it without being it. */
export function sessionKey(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** What the plugin reads of an `initialize` request's params, to store; undefined when they are not what the SDK accepts. */
export function initOf(body: unknown): SessionInit | undefined {
  const params = typeof body === 'object' && body !== null ? (body as { params?: unknown }).params : undefined;
  if (typeof params !== 'object' || params === null) return undefined;
  const { protocolVersion, capabilities, clientInfo } = params as Record<string, unknown>;
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (typeof protocolVersion !== 'string' || !isRecord(capabilities) || !isRecord(clientInfo)) return undefined;
  return { protocolVersion, capabilities, clientInfo };
}

export class Session implements SessionState, FastCallSession {
  level?: SessionState['level'];
  subscriptions?: Set<string>;
  /** Writes what `logging/setLevel` set where other replicas read it; unset without a shared store. */
  saveLevel?: () => Promise<void>;
  /** Writes what `resources/subscribe` and `unsubscribe` left where other replicas read it; unset without a shared store. */
  saveSubscriptions?: () => Promise<void>;
  /** When its stored row expires unless refreshed (this replica's clock, estimated from the store's answer). */
  expiresAt = 0;
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
  promptsChanged = false;
  /** Requests being handled (a POST holds its response stream until its answer is sent). */
  active = 0;
  lastSeen = Date.now();
  /** When it was made (performance.now()), for its duration. */
  readonly opened = performance.now();

  /** The id it has or will have: drawn here, so a store can hold it before the transport answers. */
  readonly sessionId: string;
  private storedKey?: string;

  constructor(
    core: McpCore,
    caller: Caller,
    onInitialized: (session: Session) => void,
    onClosed: (session: Session) => void,
    onDeleted?: (session: Session) => Promise<void>,
    id: string = randomUUID(),
  ) {
    this.owner = caller.name;
    this.caller = caller;
    this.sessionId = id;
    this.transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      keepAliveMs: core.keepAliveMs ?? SSE_KEEP_ALIVE_MS,
      onsessioninitialized: () => onInitialized(this),
      // Only a DELETE from its client: the session ends everywhere, not just here.
      onsessionclosed: onDeleted === undefined ? undefined : () => onDeleted(this),
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

  /** Its key in a shared store (computed once, only where there is one). */
  get key(): string {
    this.storedKey ??= sessionKey(this.sessionId);
    return this.storedKey;
  }
}

export class McpSessions implements SessionWatcher {
  private readonly sessions = new Map<string, Session>();
  /** With `records`: the sessions held, by key, for what the store's channel says of them. */
  private readonly byKey = new Map<string, Session>();
  /** With `records`: the rebuilds under way, by id, so concurrent requests for one session rebuild it once. */
  private readonly restoring = new Map<string, Promise<Session | undefined>>();
  /**
   * With `records`: the keys of ids the store had no live row for, lately, so a flood of one forged or
   * stale id costs one read rather than one per request. Safe because such an id never becomes valid:
   * bermd draws every id itself and writes its row before the id is given out, so an absent row is one
   * that never was or was deleted, for good. An expired row counts as absent for as long as it is
   * remembered; only its holder's late refresh (after the store was out of reach for half an idle
   * period) could bring it back, and other replicas then refuse it until it is forgotten here.
   */
  private readonly refused?: LRUCache<string, true>;
  private readonly records?: SessionRecords;
  private readonly stopWatching?: () => void;
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

  constructor(core: McpCore, idleMs: number = SESSION_IDLE_MS, maxSessions: number = MAX_SESSIONS, records?: SessionRecords) {
    this.core = core;
    this.idleMs = idleMs;
    this.maxSessions = maxSessions;
    this.records = records;
    if (records !== undefined) this.refused = new LRUCache({ max: REFUSED_IDS, ttl: Math.min(REFUSED_MS, idleMs) });
    // With a store, also often enough to refresh a held session's row within half an idle period.
    this.sweeper = setInterval(() => this.sweep(), Math.min(SWEEP_MS, records === undefined ? idleMs : idleMs / 4));
    this.sweeper.unref();
    this.stopWatching = records?.watch(this);
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
  async open(caller: Caller, init?: SessionInit): Promise<Session> {
    this.makeRoom();
    const session = this.build(caller, (s) => {
      this.opening.delete(s);
      this.hold(s);
      this.core.logger.debug({ session: s.id, principal: s.owner, held: this.size }, 'mcp session opened');
    });
    this.opening.add(session);
    try {
      // Stored before the transport answers with its id: a client's next request may reach any replica.
      // An `initialize` whose params the SDK would refuse is stored by nobody: its answer is an error.
      if (this.records !== undefined && init !== undefined) {
        await this.records.create({ key: session.key, owner: session.owner, init, level: null }, this.idleMs);
        session.expiresAt = Date.now() + this.idleMs;
      }
      await session.server.connect(session.transport);
    } catch (e) {
      this.opening.delete(session);
      throw e;
    }
    return session;
  }

  /**
   * The session `id` names, rebuilt from the shared store when this replica does not hold it and `caller`
   * owns it; undefined otherwise (no store, no such session, expired, another principal's). Throws
   * `SessionCapError` when it cannot be held, and what the store throws when it cannot be read.
   */
  async restore(id: string, caller: Caller, opensStream = false): Promise<Session | undefined> {
    if (this.records === undefined) return undefined;
    let pending = this.restoring.get(id);
    if (pending === undefined) {
      pending = this.rebuild(id, caller).finally(() => this.restoring.delete(id));
      this.restoring.set(id, pending);
    }
    const session = await pending;
    if (session?.owner !== caller.name) return undefined;
    // A stream reopened here after its replica went away may have missed a change while it was closed:
    // its client is told to list again, as a stream that reopens on its own replica is (see the top).
    if (opensStream) {
      session.toolsChanged = true;
      session.resourcesChanged = true;
      session.promptsChanged = true;
    }
    return session;
  }

  private async rebuild(id: string, caller: Caller): Promise<Session | undefined> {
    const key = sessionKey(id);
    if (this.refused!.has(key)) return undefined;
    const stored = await this.records!.read(key);
    if (stored === null) this.refused!.set(key, true);
    if (stored === null || stored.owner !== caller.name) return undefined;
    const held = this.sessions.get(id);
    if (held !== undefined) return held;
    this.makeRoom();
    const session = this.build(caller, undefined, id);
    this.opening.add(session);
    try {
      await session.server.connect(session.transport);
      await restoreInitialized(session.transport, session.server, id, stored.init);
    } catch (e) {
      this.opening.delete(session);
      void session.server.close();
      throw e;
    }
    this.opening.delete(session);
    this.apply(session, stored);
    this.hold(session);
    this.core.logger.debug({ session: id, principal: session.owner, held: this.size }, 'mcp session rebuilt from the store');
    return session;
  }

  /** A session's server and transport, and how this replica follows it. */
  private build(caller: Caller, onInitialized?: (s: Session) => void, id?: string): Session {
    const records = this.records;
    const session = new Session(
      this.core,
      caller,
      onInitialized ?? (() => {}),
      (s) => {
        this.opening.delete(s);
        if (s.id !== undefined) this.core.metrics?.sessionEnded((performance.now() - s.opened) / 1000);
        if (this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
        if (records !== undefined && this.byKey.get(s.key) === s) this.byKey.delete(s.key);
        this.core.logger.debug({ session: s.id }, 'mcp session closed');
      },
      records === undefined ? undefined : (s) => records.remove(s.key),
      id,
    );
    if (records !== undefined) {
      session.saveLevel = () => records.setLevel(session.key, session.level!);
      session.saveSubscriptions = () => records.setSubscriptions(session.key, [...(session.subscriptions ?? [])]);
    }
    return session;
  }

  private hold(session: Session): void {
    this.sessions.set(session.sessionId, session);
    if (this.records !== undefined) this.byKey.set(session.key, session);
  }

  /** What the store says of a session this replica holds: its log level, and how long its row has left. */
  private apply(session: Session, stored: StoredSession): void {
    session.level = (stored.level ?? undefined) as SessionState['level'];
    session.subscriptions = stored.subscriptions === undefined ? undefined : new Set(stored.subscriptions);
    session.expiresAt = Date.now() + stored.expiresInMs;
  }

  /**
   * A request reached `session`: with a shared store, its row's expiry moves to an idle period from now
   * once less than half of one is left (at most one write per half period, none in between).
   */
  touch(session: Session): void {
    if (this.records === undefined) return;
    const now = Date.now();
    if (session.expiresAt - now > this.idleMs / 2) return;
    session.expiresAt = now + this.idleMs;
    this.records.refresh(session.key, this.idleMs).catch((e: unknown) => {
      session.expiresAt = 0;
      this.core.logger.warn(
        { session: session.id, err: errorText(e) },
        'could not refresh an mcp session in the store; trying again on its next request',
      );
    });
  }

  /** Tells the other replicas that `session`'s client cancelled `ids` (a call may run on one of them). */
  cancelElsewhere(session: Session, ids: readonly RequestId[]): void {
    if (this.records === undefined || ids.length === 0) return;
    this.records.cancel(session.key, ids).catch((e: unknown) => {
      this.core.logger.warn({ session: session.id, err: errorText(e) }, 'could not pass a cancellation on to the other replicas');
    });
  }

  /** Another replica changed the session `key` names (its log level) or ended it: read it again. */
  sessionChanged(key: string): void {
    const session = this.byKey.get(key);
    if (session !== undefined) void this.reread([session]);
  }

  /** A client's cancel reached another replica: a call of it running here stops, on the fast path or the SDK's. */
  sessionCancelled(key: string, ids: ReadonlyArray<string | number>): void {
    const session = this.byKey.get(key);
    if (session === undefined) return;
    this.cancel(session, ids);
    for (const requestId of ids) {
      // The SDK's server stops a handler of its own when its transport hands it the notification.
      session.transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'cancelled' } });
    }
  }

  /** The store's channel was lost for a while: every session held is read again. */
  resync(): void {
    if (this.byKey.size > 0) void this.reread([...this.byKey.values()]);
  }

  /** Reads `sessions` again: one whose row is gone (ended or expired) is closed here too. */
  private async reread(sessions: Session[]): Promise<void> {
    let stored: StoredSession[];
    try {
      stored = await this.records!.readMany(sessions.map((s) => s.key));
    } catch (e) {
      this.core.logger.warn({ err: errorText(e) }, 'could not read mcp sessions again from the store; their next change will be');
      return;
    }
    const found = new Map(stored.map((r) => [r.key, r]));
    for (const session of sessions) {
      const record = found.get(session.key);
      if (record !== undefined) this.apply(session, record);
      else if (this.byKey.get(session.key) === session) {
        this.core.logger.debug({ session: session.id }, 'mcp session ended elsewhere');
        void session.server.close();
      }
    }
  }

  /**
   * The `initialize` that opened `session` is answered. A session the transport started is in the map by
   * now; one it refused (a bad header, a malformed request) never will be, and is let go, with its row.
   */
  answered(session: Session): void {
    if (!this.opening.delete(session)) return;
    void session.server.close();
    if (this.records !== undefined && session.expiresAt > 0) {
      this.records.remove(session.key).catch((e: unknown) => {
        this.core.logger.debug({ session: session.sessionId, err: errorText(e) }, 'could not delete a refused mcp session; it expires');
      });
    }
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
      // Out of the map now, so the count drops at once; closing it ends its transport (here only: a
      // shared store keeps its row, and a later request rebuilds it).
      this.sessions.delete(oldest.sessionId);
      if (this.records !== undefined) this.byKey.delete(oldest.key);
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
      session.promptsChanged = true;
      if (session.streamOpen) this.flush(session);
    }
  }

  /**
   * Everything told of a resource's change on this replica (its sessions, and the 2026-07-28 listen
   * streams, which the daemon adds): set by the daemon, its sessions alone until then.
   */
  fanOutResource: (harness: string, path: string) => void = (harness, path) => this.resourceUpdated(harness, path);

  /**
   * A guest said `harness`'s resource at `path` changed: on a store replicas share, every replica hears of
   * it through the store's channel (this one too, so it is told once); else it is told here.
   */
  publishResourceUpdate(harness: string, path: string): void {
    if (this.records === undefined) {
      this.fanOutResource(harness, path);
      return;
    }
    this.records.resourceUpdated(harness, path).catch((e: unknown) => {
      this.core.logger.warn({ harness, path, err: errorText(e) }, 'could not tell the other replicas that a resource changed');
      this.fanOutResource(harness, path);
    });
  }

  /** From the store's channel (`SessionWatcher`): the payload is anyone's who can connect, and is checked where it is served. */
  resourceChanged(harness: string, path: string): void {
    this.fanOutResource(harness, path);
  }

  /**
   * `harness`'s resource at `path` changed: each session subscribed to it, in either URI form, whose
   * principal may call the harness, is sent `notifications/resources/updated` with the URI it subscribed.
   * A path the deployed harness does not declare (a notification forged on the store's channel) tells nothing.
   */
  resourceUpdated(harness: string, path: string): void {
    const surface = this.core.catalog.surface(harness);
    if (surface === undefined || resolvePath(surface, path) === undefined) return;
    const uris = resourceUris(harness, path);
    for (const session of this.sessions.values()) {
      if (session.subscriptions === undefined || !session.caller.mayCall(harness)) continue;
      for (const uri of uris) {
        if (!session.subscriptions.has(uri)) continue;
        session.server.sendResourceUpdated({ uri }).catch((e: unknown) => this.lost(session, e));
      }
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
  cancel(session: Session, ids: ReadonlyArray<RequestId>): void {
    for (const id of ids) session.calls.get(id)?.abort();
  }

  /** Closes every session (ending their streams) and stops the idle sweep. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    this.stopWatching?.();
    const all = [...this.sessions.values(), ...this.opening];
    await Promise.allSettled(all.map((s) => s.server.close()));
    for (const s of all) for (const call of s.calls.values()) call.abort();
    this.sessions.clear();
    this.byKey.clear();
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
    if (session.promptsChanged) {
      session.promptsChanged = false;
      session.server.sendPromptListChanged().catch((e: unknown) => this.lost(session, e));
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
      } else if (session.active > 0 || session.streamOpen) {
        // In use with no new request (a stream open, a long call): its row must outlive the idle period too.
        this.touch(session);
      }
    }
    this.records?.prune().catch((e: unknown) => this.core.logger.debug({ err: errorText(e) }, 'could not delete expired mcp sessions'));
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
