import { Agent, request, type Dispatcher } from 'undici';
import { BermClientError, DaemonUnreachableError, errorCode, isUnreachable } from './errors.js';
import type { DeployResult, HarnessDetail, HarnessSummary } from './types.js';

/** The address bermd listens on unless told otherwise. */
export const DEFAULT_URL = 'http://127.0.0.1:7477';

/** The harness name rule (spec §5), checked here too so a name like `..` never turns into another path. */
const HARNESS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface BermClientOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** An undici dispatcher to send through; by default the client owns one and `close()` ends it. */
  dispatcher?: Dispatcher;
}

export interface DeployOptions {
  /** Deploy even when the new image breaks recent callers. */
  force?: boolean;
  /** Run every check and the compatibility gate and answer as the deploy would (or refuse as it would), storing and serving nothing. */
  dryRun?: boolean;
  /** The harness's own call time limit, below the daemon's: `500ms`, `10s`, `2m`, or a number of milliseconds. */
  timeout?: string | number;
  /** The harness's own memory cap, below the daemon's: `16M`, `512K`, or a number of bytes. */
  maxMemory?: string | number;
  /** The harness's own result size limit, below the daemon's: `256K`, or a number of bytes. */
  maxResultSize?: string | number;
  /**
   * What the harness is granted, when less than everything it declares: `syscall=berm.http.fetch`,
   * `berm.http.fetch=api.example.com`, `secret=example`, or `none`. Without grants, everything declared is.
   */
  grants?: string[];
}

/** The deploy's query string: force and the bindings, as the daemon reads them. */
function deployQuery(options: DeployOptions): string {
  const query = new URLSearchParams();
  if (options.force) query.set('force', 'true');
  if (options.dryRun) query.set('dry-run', 'true');
  if (options.timeout !== undefined) query.set('timeout', typeof options.timeout === 'number' ? `${options.timeout}ms` : options.timeout);
  if (options.maxMemory !== undefined) query.set('max_memory', String(options.maxMemory));
  if (options.maxResultSize !== undefined) query.set('max_result_size', String(options.maxResultSize));
  for (const grant of options.grants ?? []) query.append('grant', grant);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

type Method = 'GET' | 'PUT' | 'DELETE';

/** A typed client for the bermd control API. */
export class BermClient {
  readonly url: string;
  private readonly token?: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(url: string = DEFAULT_URL, options: BermClientOptions = {}) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new BermClientError('bad-url', `${JSON.stringify(url)} is not a URL (expected e.g. ${DEFAULT_URL})`, url);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new BermClientError('bad-url', `${url}: bermd speaks http or https`, url);
    }
    this.url = parsed.href.replace(/\/+$/, '');
    this.token = options.token;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent();
  }

  /** Deploys `bytes` as `name`; a refusal is a `BermClientError` with the daemon's code (e.g. `missing-export`). */
  async deploy(name: string, bytes: Uint8Array, options: DeployOptions = {}): Promise<DeployResult> {
    const path = `${this.harnessPath(name)}${deployQuery(options)}`;
    const { status, body } = await this.send('PUT', path, [200, 201], {
      body: bytes,
      headers: { 'content-type': 'application/wasm' },
    });
    return { ...(await this.json<Omit<DeployResult, 'replaced'>>(body, path)), replaced: status === 200 };
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
    return new Uint8Array(await body.arrayBuffer());
  }

  async undeploy(name: string): Promise<void> {
    const { body } = await this.send('DELETE', this.harnessPath(name), [204]);
    await body.dump();
  }

  /** Closes the connections this client opened. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private harnessPath(name: string): string {
    if (!HARNESS_NAME.test(name)) {
      throw new BermClientError(
        'bad-name',
        `harness name ${JSON.stringify(name)} is not allowed: use 1 to 64 letters, digits, '_' or '-' (no dots)`,
        `${this.url}/harnesses/`,
      );
    }
    return `/harnesses/${name}`;
  }

  private async send(
    method: Method,
    path: string,
    expected: number[],
    extra: { body?: Uint8Array; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Dispatcher.ResponseData['body'] }> {
    const url = `${this.url}${path}`;
    const headers: Record<string, string> = { accept: 'application/json', ...extra.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, { method, headers, body: extra.body, dispatcher: this.dispatcher });
    } catch (e) {
      if (isUnreachable(e)) throw new DaemonUnreachableError(this.url, url, e);
      throw new BermClientError('connection-lost', `the connection to bermd at ${this.url} failed during ${method} ${path} (${errorCode(e) ?? (e as Error).message})`, url, { cause: e });
    }
    const { statusCode: status, body } = response;
    if (expected.includes(status)) return { status, body };
    const text = await body.text().catch(() => '');
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
    throw new BermClientError('unexpected-response', `${method} ${url} answered ${status}, which is not a bermd answer: ${text.slice(0, 200)}`, url, { status });
  }

  private async json<T>(body: Dispatcher.ResponseData['body'], path: string): Promise<T> {
    const text = await body.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new BermClientError('unexpected-response', `${this.url}${path} answered with something other than JSON: ${text.slice(0, 200)}`, `${this.url}${path}`);
    }
  }
}
