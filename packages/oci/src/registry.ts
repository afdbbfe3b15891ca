/**
 * A client of the OCI distribution spec (1.1), as much of it as pushing and pulling a wasm artifact takes:
 * the version check, blob existence (HEAD), upload (one PUT, or PATCH chunks past a threshold), a mount from
 * another repository of the same registry, blob reads whole or by range, and manifests with content
 * negotiation. Written here over undici rather than taken from npm: the maintained registry clients there
 * are docker-v2-only (docker-registry-client), tied to one product's artifacts (@sigstore/oci), or pull in a
 * whole container toolchain, and none reads a blob by range, which is what makes inspecting an image
 * without the berm layer cheap.
 *
 * Authentication is the spec's: a 401 with `WWW-Authenticate: Bearer realm=…,service=…,scope=…` is
 * answered by asking the realm for a token (with the credential as basic auth, or anonymously), a `Basic`
 * challenge by sending the credential. Tokens are kept per scope for the client's life.
 */
import { Agent, type Dispatcher, request } from 'undici';
import { type Credential, credentialFor } from './credentials.js';
import { OciError, escapeText } from './errors.js';
import { isLoopbackHost } from './reference.js';

export interface RegistryOptions {
  /** Hosts spoken to over plain HTTP; loopback hosts always are. */
  insecure?: readonly string[];
  /** The credential to use; by default it is looked up (credentials.ts) on the first challenge. */
  credential?: Credential | null;
  env?: NodeJS.ProcessEnv;
  dispatcher?: Dispatcher;
  /** Blobs larger than this go up in PATCH chunks of this size; smaller ones in one PUT. */
  chunkSize?: number;
}

export const DEFAULT_CHUNK = 8 * 1024 * 1024;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

interface Send {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH';
  /** A path under the registry (`/v2/…`) or an absolute URL the registry gave (an upload's Location). */
  url: string;
  repository: string;
  push?: boolean;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Statuses that are answers; anything else is an error. */
  ok: readonly number[];
  /** Reading a body larger than this fails with `tooLarge`'s error instead. */
  limit?: number;
  tooLarge?: () => OciError;
  /** What is being done, for messages: `reading the manifest of oci://…`. */
  doing: string;
}

/** One registry host, spoken to as one client: its tokens and credential are kept between requests. */
export class Registry {
  readonly host: string;
  readonly origin: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly tokens = new Map<string, string>();
  private credential: Credential | null | undefined;
  private readonly env: NodeJS.ProcessEnv;
  readonly chunkSize: number;
  /** The scheme of authorization the registry asked for, once it has. */
  private scheme: 'bearer' | 'basic' | undefined;
  private challenge: Record<string, string> = {};

  constructor(host: string, options: RegistryOptions = {}) {
    this.host = host;
    const plain = isLoopbackHost(host) || (options.insecure ?? []).includes(host);
    this.origin = `${plain ? 'http' : 'https'}://${host}`;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ connect: { timeout: 10_000 } });
    this.credential = options.credential;
    this.env = options.env ?? process.env;
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** `GET /v2/`, authenticated as pushing to `repository` would be: what `registry login` checks a credential with. */
  async check(repository?: string): Promise<void> {
    await this.send({ method: 'GET', url: '/v2/', repository: repository ?? '', ok: [200], doing: `signing in to ${this.host}` });
  }

  /** Sends a request, answering the registry's challenge once. */
  async send(req: Send): Promise<Answer> {
    let answer = await this.once(req, this.authorization(req));
    if (answer.status === 401) {
      await this.answerChallenge(answer, req);
      answer = await this.once(req, this.authorization(req));
      if (answer.status === 401) throw this.refused(answer, req);
    }
    if (!req.ok.includes(answer.status)) throw this.failed(answer, req);
    return answer;
  }

  private scopeOf(req: Send): string {
    return req.repository === '' ? '' : `repository:${req.repository}:${req.push ? 'pull,push' : 'pull'}`;
  }

  private authorization(req: Send): string | undefined {
    if (this.scheme === 'basic' && this.credential) return basic(this.credential);
    if (this.scheme === 'bearer') {
      const token = this.tokens.get(this.scopeOf(req));
      return token === undefined ? undefined : `Bearer ${token}`;
    }
    return undefined;
  }

  private async loadCredential(): Promise<Credential | null> {
    if (this.credential === undefined) this.credential = (await credentialFor(this.host, { env: this.env })) ?? null;
    return this.credential;
  }

  private async answerChallenge(answer: Answer, req: Send): Promise<void> {
    const header = first(answer.headers['www-authenticate']) ?? '';
    const { scheme, params } = parseChallenge(header);
    const credential = await this.loadCredential();
    if (scheme === 'basic') {
      if (credential === null) throw this.refused(answer, req);
      this.scheme = 'basic';
      return;
    }
    if (scheme !== 'bearer' || params.realm === undefined) throw this.refused(answer, req);
    this.scheme = 'bearer';
    this.challenge = params;
    this.tokens.set(this.scopeOf(req), await this.fetchToken(this.scopeOf(req), credential, req));
  }

  /** A token for `scope` from the challenge's realm: GET with basic auth when there is a credential, as the token spec has it. */
  private async fetchToken(scope: string, credential: Credential | null, req: Send): Promise<string> {
    let realm: URL;
    try {
      realm = new URL(this.challenge.realm!);
    } catch {
      throw new OciError('registry-error', `${this.host} asked for a token from a realm that is not a URL`, { registry: this.host });
    }
    if (this.challenge.service !== undefined) realm.searchParams.set('service', this.challenge.service);
    if (scope !== '') realm.searchParams.set('scope', scope);
    const headers: Record<string, string> = {};
    if (credential) headers.authorization = basic(credential);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(realm, { method: 'GET', headers, dispatcher: this.dispatcher });
    } catch (e) {
      throw unreachable(realm.host, `asking ${realm.origin} for a token to ${req.doing.replace(/^./, (c) => c.toLowerCase())}`, e);
    }
    const body = new Uint8Array(await res.body.arrayBuffer());
    if (res.statusCode === 401 || res.statusCode === 403) {
      throw this.refused({ status: res.statusCode, headers: res.headers, body }, req, realm.origin);
    }
    let token: unknown;
    try {
      const value = JSON.parse(new TextDecoder().decode(body)) as { token?: unknown; access_token?: unknown };
      token = value.token ?? value.access_token;
    } catch {
      token = undefined;
    }
    if (res.statusCode !== 200 || typeof token !== 'string') {
      throw new OciError(
        'registry-error',
        `the token server of ${this.host} (${realm.origin}) answered ${res.statusCode} without a token`,
        {
          registry: this.host,
          status: res.statusCode,
        },
      );
    }
    return token;
  }

  private async once(req: Send, authorization: string | undefined): Promise<Answer> {
    let url = new URL(req.url, this.origin);
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    for (let hop = 0; ; hop++) {
      // Credentials go only to the registry itself: a redirect to storage elsewhere gets none.
      const sameOrigin = url.origin === this.origin;
      const sent = sameOrigin && authorization !== undefined ? { ...headers, authorization } : headers;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, { method: req.method, headers: sent, body: req.body, dispatcher: this.dispatcher });
      } catch (e) {
        throw unreachable(this.host, req.doing, e);
      }
      const location = first(res.headers.location);
      if (
        [301, 302, 303, 307, 308].includes(res.statusCode) &&
        location !== undefined &&
        (req.method === 'GET' || req.method === 'HEAD') &&
        hop < 5
      ) {
        await res.body.dump();
        url = new URL(location, url);
        continue;
      }
      const body = await readBody(res, req);
      return { status: res.statusCode, headers: res.headers, body };
    }
  }

  private refused(answer: Answer, req: Send, where = this.host): OciError {
    const words = registryWords(answer.body);
    const had = this.credential ? 'the credential for it was refused' : 'no credential for it was found';
    const code = answer.status === 403 ? 'registry-denied' : 'registry-unauthorized';
    return new OciError(
      code,
      `${where} refused ${req.doing.replace(/^./, (c) => c.toLowerCase())} (${answer.status}${words ? `: ${words}` : ''}); ${had}: log in with crab registry login ${this.host} or set BERM_REGISTRY_AUTH`,
      { registry: this.host, status: answer.status },
    );
  }

  private failed(answer: Answer, req: Send): OciError {
    const words = registryWords(answer.body);
    const detail = { registry: this.host, status: answer.status };
    if (answer.status === 401 || answer.status === 403) return this.refused(answer, req);
    if (answer.status === 404)
      return new OciError(
        'artifact-not-found',
        `${req.doing}: ${this.host} has no such artifact (404${words ? `: ${words}` : ''})`,
        detail,
      );
    return new OciError('registry-error', `${req.doing}: ${this.host} answered ${answer.status}${words ? `: ${words}` : ''}`, detail);
  }
}

async function readBody(res: Dispatcher.ResponseData, req: Send): Promise<Uint8Array> {
  if (req.method === 'HEAD') {
    await res.body.dump();
    return new Uint8Array(0);
  }
  const limit = req.limit;
  if (limit === undefined || res.statusCode >= 300) return new Uint8Array(await res.body.arrayBuffer());
  const declared = Number(first(res.headers['content-length']));
  if (Number.isFinite(declared) && declared > limit) {
    res.body.destroy();
    throw req.tooLarge!();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += (chunk as Uint8Array).length;
    if (total > limit) {
      res.body.destroy();
      throw req.tooLarge!();
    }
    chunks.push(chunk as Uint8Array);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

export function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function basic(c: Credential): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

/** `Bearer realm="…",service="…"` as a scheme and its parameters. */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const m = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  if (m === null) return { scheme: '', params: {} };
  const params: Record<string, string> = {};
  for (const p of m[2]!.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  }
  return { scheme: m[1]!.toLowerCase(), params };
}

/** The registry's own words from an error body (`{"errors": [{"code", "message"}]}`), escaped for a terminal. */
function registryWords(body: Uint8Array): string {
  const text = new TextDecoder().decode(body.subarray(0, 4096));
  try {
    const { errors } = JSON.parse(text) as { errors?: { code?: unknown; message?: unknown }[] };
    if (Array.isArray(errors) && errors.length > 0) {
      return escapeText(errors.map((e) => [e.code, e.message].filter((x) => typeof x === 'string').join(' ')).join('; '));
    }
  } catch {
    // not the spec's error body: its text, if short
  }
  return escapeText(text.trim(), 200);
}

function unreachable(host: string, doing: string, e: unknown): OciError {
  const why = (e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e));
  return new OciError(
    'registry-unreachable',
    `${doing}: cannot reach the registry at ${host} (${escapeText(String(why))}); check the address, or whether it speaks plain HTTP (--insecure-registry ${host})`,
    {
      registry: host,
    },
  );
}
