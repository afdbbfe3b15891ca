/**
 * A replica's listening connection to the PostgreSQL store: a connection of its own, outside the pool,
 * that LISTENs on the store's channel and hands each notification to the registry, reconnecting when it
 * is lost. While it is lost this replica does not follow what the others change; deploys here are
 * unaffected, since they read the stored row and its usage inside their own transaction. Each
 * (re)connection starts with a comparison of the whole set (`resync`), for what was missed.
 *
 * It is a small state machine, one state at a time, each holding only what belongs to it:
 *
 * - `connecting`: a connection is being opened and its LISTEN sent;
 * - `listening`: it listens, and is probed with `SELECT 1` every `timeoutMs` (a silent path delivers no
 *   notification and no error: only a statement that goes unanswered tells);
 * - `lost`: the last connection failed or went away; a timer starts `connecting` again after a doubling
 *   delay (`backoff`);
 * - `stopped`: for good; nothing is open and no timer runs.
 *
 * `failures` counts the attempts that failed since the last connection: the loss is logged once, when
 * it is the first, and the recovery only after one.
 */
import { backoff } from '@berm/protocol';
import type pg from 'pg';
import type { Logger } from 'pino';
import { reasonOf } from './postgres-errors.js';
import { decodeNotification, decodeResourceNotification, decodeSessionNotification } from './postgres-notification.js';
import { CHANNEL } from './postgres-schema.js';
import type { SessionWatcher } from './session-records.js';
import type { StoreWatcher } from './store.js';

/** The listening connection's `application_name`: an operator (or a test) finds it in `pg_stat_activity` by it. */
export const LISTEN_APPLICATION_NAME = 'bermd-listen';

/** The delays between reconnections. */
const RECONNECT_BACKOFF = { firstMs: 250, maxMs: 5000 };

type ListenerState =
  | { kind: 'connecting' }
  | { kind: 'listening'; client: pg.Client; probe?: NodeJS.Timeout }
  | { kind: 'lost'; retry: NodeJS.Timeout }
  | { kind: 'stopped' };

export interface ListenerOptions {
  /** The driver the store loaded. */
  driver: typeof pg;
  /** The pool's connection settings; the listener's own `application_name` replaces the pool's. */
  config: pg.ClientConfig;
  /** How often the connection is probed, and how long a probe may go unanswered. */
  timeoutMs: number;
  /** The store, named without its password. */
  location: string;
  logger: Logger;
  /** Who hears of the MCP sessions' changes, when someone does (the daemon's sessions, once they exist). */
  sessions?: () => SessionWatcher | undefined;
}

export class StoreListener {
  private state: ListenerState = { kind: 'connecting' };
  private failures = 0;

  /** Listening, or connecting for the first time: false once the connection was lost, until it is back. */
  get reachable(): boolean {
    return this.state.kind === 'listening' || (this.state.kind === 'connecting' && this.failures === 0);
  }

  constructor(
    private readonly options: ListenerOptions,
    private readonly watcher: StoreWatcher,
  ) {
    void this.connect();
  }

  /** Stops listening for good: ends the connection, if any, and any timer. */
  stop(): void {
    const state = this.state;
    this.state = { kind: 'stopped' };
    if (state.kind === 'lost') clearTimeout(state.retry);
    if (state.kind === 'listening') {
      clearTimeout(state.probe);
      void state.client.end().catch(() => {});
    }
  }

  /** `connecting`: opens a connection and LISTENs; `listening` on success, `lost` on failure. */
  private async connect(): Promise<void> {
    const c = new this.options.driver.Client({ ...this.options.config, application_name: LISTEN_APPLICATION_NAME });
    c.on('error', () => {}); // followed by 'end', where it is handled
    c.on('end', () => this.drop(c, new Error('Connection terminated')));
    c.on('notification', (n) => {
      if (n.channel === CHANNEL && this.state.kind !== 'stopped') this.notified(n.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (e) {
      void c.end().catch(() => {});
      this.lose(e);
      return;
    }
    // Stopped while connecting: the state no longer holds a connection to end, so it is ended here.
    if (this.state.kind !== 'connecting') {
      void c.end().catch(() => {});
      return;
    }
    this.state = { kind: 'listening', client: c };
    this.probeLater(c);
    if (this.failures > 0)
      this.options.logger.info({ store: this.options.location }, 'the store answers again: comparing the deployed set with it');
    this.failures = 0;
    this.watcher.resync();
    this.options.sessions?.()?.resync();
  }

  /** Gives up on `c` (ended by the server, or silent) once, if it is the one listening, and reconnects. */
  private drop(c: pg.Client, e: unknown): void {
    const state = this.state;
    if (state.kind !== 'listening' || state.client !== c) return;
    clearTimeout(state.probe);
    // With a probe unanswered, node-postgres destroys the socket rather than wait to say goodbye on it.
    void c.end().catch(() => {});
    this.lose(e);
  }

  /** `lost`: says so if it is the first failure since the last connection, and connects again after a delay. */
  private lose(e: unknown): void {
    if (this.state.kind === 'stopped') return;
    if (this.failures === 0)
      this.options.logger.warn(
        { store: this.options.location, err: reasonOf(e) },
        "lost the store's notifications: changes made through other replicas are not followed until they are back; " +
          'deploys here do not depend on them (they read the store itself); reconnecting',
      );
    const retry = setTimeout(
      () => {
        this.state = { kind: 'connecting' };
        void this.connect();
      },
      backoff(this.failures, RECONNECT_BACKOFF),
    );
    retry.unref();
    this.failures++;
    this.state = { kind: 'lost', retry };
  }

  /** The next probe of `c`, while it is the one listening. */
  private probeLater(c: pg.Client): void {
    const state = this.state;
    if (state.kind !== 'listening' || state.client !== c) return;
    state.probe = setTimeout(() => {
      c.query('SELECT 1').then(
        () => this.probeLater(c),
        (e: unknown) => this.drop(c, e),
      );
    }, this.options.timeoutMs);
    state.probe.unref();
  }

  /** What a notification names, and nothing else of it: the payload is anyone's who can connect. */
  private notified(payload: string | undefined): void {
    const change = decodeNotification(payload);
    if (change?.what === 'harness') this.watcher.harnessChanged(change.name);
    else if (change?.what === 'usage') this.watcher.usageChanged(change.name);
    else if (change === null) this.sessionNotified(payload);
  }

  private sessionNotified(payload: string | undefined): void {
    const watcher = this.options.sessions?.();
    if (watcher === undefined) return;
    const change = decodeSessionNotification(payload);
    if (change?.what === 'session') watcher.sessionChanged(change.key);
    else if (change?.what === 'cancel') watcher.sessionCancelled(change.key, change.ids);
    else if (change === null) {
      const resource = decodeResourceNotification(payload);
      if (resource !== null) watcher.resourceChanged?.(resource.name, resource.path);
    }
  }
}
