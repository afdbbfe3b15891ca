import {
  badHarnessNameMessage,
  encodeDeployQuery,
  isHarnessName,
  type DeployAnswer,
  type DeployOptions,
  type DeployResult,
  type HarnessDetail,
  type HarnessSummary,
  type HistoryPage,
  type ReceiptsPage,
  type RetainedImages,
  type RollbackRequest,
  type UndeployedHarness,
  type WhoAmI,
} from '@berm/protocol';
import type { Agent } from 'node:http';
import { BermClientError, DaemonUnreachableError, errorCode, isUnreachable } from './errors.js';
import { exchange, type Exchanged, keepAliveAgent } from './exchange.js';

export type { DeployOptions };

export interface HistoryOptions {
  /** A previous page's `next_cursor`: the page older than it. Absent: the newest page. */
  cursor?: string;
  /** The most entries the page holds (bermd's default when absent, 50; at most 500). */
  limit?: number;
}

export interface ReceiptsOptions {
  /** Only the receipts of calls that sent this idempotency key. */
  key?: string;
  /** Each receipt with its recorded answer; without, the outcome alone. */
  bodies?: boolean;
  /** The most receipts answered (bermd's default when absent, 100; at most 1,000), newest first. */
  limit?: number;
}

export interface RollbackOptions extends RollbackRequest {
  /** Go back even when it breaks callers of what the served image added (needs `berm:force`). */
  force?: boolean;
  /** Every check and the gate, nothing stored or served: what the rollback would answer, or its refusal. */
  dryRun?: boolean;
}

/** The address bermd listens on unless told otherwise. */
export const DEFAULT_URL = 'http://127.0.0.1:7477';

export interface BermClientOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * The `node:http` (or, for an https URL, `node:https`) agent to send through; by default the client owns
   * a keep-alive one and `close()` ends its connections.
   */
  agent?: Agent;
}

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** A daemon address as bermd's clients take it: an http or https URL. Throws `BermClientError` `bad-url`. */
export function daemonUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BermClientError('bad-url', `${JSON.stringify(url)} is not a URL (expected e.g. ${DEFAULT_URL})`, url);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BermClientError('bad-url', `${url}: bermd speaks http or https`, url);
  }
  return parsed;
}

/** A typed client for the bermd control API. */
export class BermClient {
  readonly url: string;
  private readonly token?: string;
  private readonly agent?: Agent;
  private ownAgent?: Promise<Agent>;

  constructor(url: string = DEFAULT_URL, options: BermClientOptions = {}) {
    this.url = daemonUrl(url).href.replace(/\/+$/, '');
    this.token = options.token;
    this.agent = options.agent;
  }

  /** Deploys `bytes` as `name`; a refusal is a `BermClientError` with the daemon's code (e.g. `missing-export`). */
  async deploy(name: string, bytes: Uint8Array, options: DeployOptions = {}): Promise<DeployResult> {
    const path = `${this.harnessPath(name)}${encodeDeployQuery(options)}`;
    const { status, body } = await this.send('PUT', path, [200, 201], {
      body: bytes,
      headers: { 'content-type': 'application/wasm' },
    });
    return { ...this.json<DeployAnswer>(body, path), replaced: status === 200 };
  }

  async list(): Promise<HarnessSummary[]> {
    const { body } = await this.send('GET', '/harnesses', [200]);
    return this.json<HarnessSummary[]>(body, '/harnesses');
  }

  async get(name: string): Promise<HarnessDetail> {
    const path = this.harnessPath(name);
    const { body } = await this.send('GET', path, [200]);
    return this.json<HarnessDetail>(body, path);
  }

  /** The image bytes as stored by the daemon. */
  async image(name: string): Promise<Uint8Array> {
    const { body } = await this.send('GET', `${this.harnessPath(name)}/image`, [200]);
    return new Uint8Array(body);
  }

  /** Who the token names to this bermd (`anonymous` where it asks for none), and the scopes it holds. */
  async whoami(): Promise<WhoAmI> {
    const { body } = await this.send('GET', '/whoami', [200]);
    return this.json<WhoAmI>(body, '/whoami');
  }

  async undeploy(name: string): Promise<void> {
    await this.send('DELETE', this.harnessPath(name), [204]);
  }

  /** A page of `name`'s deploy history, newest first; an empty page for a name bermd has none of. */
  async history(name: string, options: HistoryOptions = {}): Promise<HistoryPage> {
    const query = new URLSearchParams();
    if (options.cursor !== undefined) query.set('cursor', options.cursor);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const text = query.toString();
    const path = `${this.harnessPath(name)}/history${text === '' ? '' : `?${text}`}`;
    const { body } = await this.send('GET', path, [200]);
    return this.json<HistoryPage>(body, path);
  }

  /** The receipts of `name`'s external writes kept within bermd's `--receipt-retention`, newest first. */
  async receipts(name: string, options: ReceiptsOptions = {}): Promise<ReceiptsPage> {
    const query = new URLSearchParams();
    if (options.key !== undefined) query.set('key', options.key);
    if (options.bodies === true) query.set('bodies', 'true');
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const text = query.toString();
    const path = `${this.harnessPath(name)}/receipts${text === '' ? '' : `?${text}`}`;
    const { body } = await this.send('GET', path, [200]);
    return this.json<ReceiptsPage>(body, path);
  }

  /** What `name` serves and the images kept for it, which a rollback can go back to (most recently served first). */
  async images(name: string): Promise<RetainedImages> {
    const path = `${this.harnessPath(name)}/images`;
    const { body } = await this.send('GET', path, [200]);
    return this.json<RetainedImages>(body, path);
  }

  /** The bytes of an image kept for `name` (the served one's included), by its `sha256:` digest. */
  async retainedImage(name: string, digest: string): Promise<Uint8Array> {
    // Encoded, so that no digest, however malformed, reaches another path; bermd refuses a malformed one.
    const { body } = await this.send('GET', `${this.harnessPath(name)}/images/${encodeURIComponent(digest)}`, [200]);
    return new Uint8Array(body);
  }

  /**
   * Deploys again an image bermd keeps for `name` (`to` a digest, or `steps` back, one by default), through
   * the compatibility gate as a deploy goes; on an undeployed name it brings back the image served last.
   * Answers as `deploy` does, with the history `entry` it made; a refusal is a `BermClientError`
   * (`breaks-callers`, `not-retained`, `already-serving`).
   */
  async rollback(name: string, options: RollbackOptions = {}): Promise<DeployResult> {
    const path = `${this.harnessPath(name)}/rollback${encodeDeployQuery({ force: options.force, dryRun: options.dryRun })}`;
    const target: RollbackRequest = {};
    if (options.to !== undefined) target.to = options.to;
    if (options.steps !== undefined) target.steps = options.steps;
    const { status, body } = await this.send('POST', path, [200, 201], {
      body: new TextEncoder().encode(JSON.stringify(target)),
      headers: { 'content-type': 'application/json' },
    });
    return { ...this.json<DeployAnswer>(body, path), replaced: status === 200 };
  }

  /** The names undeployed within bermd's history retention, newest first, each with the image a rollback brings back. */
  async undeployed(): Promise<UndeployedHarness[]> {
    const { body } = await this.send('GET', '/undeployed', [200]);
    return this.json<{ harnesses: UndeployedHarness[] }>(body, '/undeployed').harnesses;
  }

  /** Closes the connections this client opened. */
  async close(): Promise<void> {
    if (this.ownAgent !== undefined) (await this.ownAgent).destroy();
  }

  private harnessPath(name: string): string {
    // The rule is checked here too, so a name like `..` never turns into another path.
    if (!isHarnessName(name)) throw new BermClientError('bad-name', badHarnessNameMessage(name), `${this.url}/harnesses/`);
    return `/harnesses/${name}`;
  }

  private async send(
    method: Method,
    path: string,
    expected: number[],
    extra: { body?: Uint8Array; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Buffer }> {
    const url = `${this.url}${path}`;
    const headers: Record<string, string> = { accept: 'application/json', ...extra.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let response: Exchanged;
    try {
      const target = new URL(url);
      this.ownAgent ??= keepAliveAgent(target.protocol);
      const agent = this.agent ?? (await this.ownAgent);
      response = await exchange(target, { method, headers, body: extra.body, agent });
    } catch (e) {
      if (isUnreachable(e)) throw new DaemonUnreachableError(this.url, url, e);
      throw new BermClientError(
        'connection-lost',
        `the connection to bermd at ${this.url} failed during ${method} ${path} (${errorCode(e) ?? (e as Error).message})`,
        url,
        { cause: e },
      );
    }
    const { status, body } = response;
    if (expected.includes(status)) return { status, body };
    const text = body.toString('utf8');
    let error: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed?.error === 'object' && parsed.error !== null) error = parsed.error as Record<string, unknown>;
    } catch {
      // not a bermd error body; reported as unexpected below
    }
    if (error !== undefined && typeof error.code === 'string') {
      const message = typeof error.message === 'string' ? error.message : `bermd answered ${status}`;
      throw new BermClientError(error.code, message, url, { status, body: error });
    }
    throw new BermClientError(
      'unexpected-response',
      `${method} ${url} answered ${status}, which is not a bermd answer: ${text.slice(0, 200)}`,
      url,
      { status },
    );
  }

  private json<T>(body: Buffer, path: string): T {
    const text = body.toString('utf8');
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new BermClientError(
        'unexpected-response',
        `${this.url}${path} answered with something other than JSON: ${text.slice(0, 200)}`,
        `${this.url}${path}`,
      );
    }
  }
}
