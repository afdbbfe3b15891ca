/**
 * `berm.http.fetch` and `berm.http.proxy` on the daemon's side: each request a guest makes is checked
 * against what its harness declares and is granted, has its `{secret:NAME}` references filled in, and is
 * sent with undici; the answer goes back to the guest (runtime/http-fetch.ts carries it).
 *
 * Refused, with nothing sent: a syscall or host the harness does not declare or is not granted, a secret
 * it does not declare or is not granted, a secret the operator has not provided for the call (its scope is
 * the harness the call entered through, the top of a `berm.call` chain, and the principal the chain runs
 * for, whose own value a secret given per principal takes), a URL that is not http: or
 * https:, a header the host owns. Redirects are answered as they come, never followed. A body longer
 * than `maxBodyBytes` is cut, and the answer says `"truncated": true`. A secret value the server echoes
 * back is replaced by `{secret:NAME}` before the guest sees it.
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { HTTP_SYSCALLS, SYSCALL, type GrantSet } from '@berm/protocol';
import type { HostEnvelope, HostService, HostServiceCall } from '../runtime/index.js';
import { firstMatch, grantedPatterns, type HostPattern } from './hosts.js';
import { IDEMPOTENCY_KEY_REF, parseGuestRequest, SECRET_REF, secretRefs, type GuestRequest } from './request.js';
import { resolvingConnector, type ResolveEntry } from './resolve.js';
import type { Secrets, SecretUnavailable } from './secrets.js';
import { numberDefault } from '../limits.js';

const FETCH = SYSCALL.httpFetch;
const PROXY = SYSCALL.httpProxy;

/** The syscalls beyond the ABI that bermd can serve, when its operator turns them on (`--serve`). */
export const SERVABLE_SYSCALLS: readonly string[] = HTTP_SYSCALLS;

/** 1 MiB: the default bound on a response body handed to a guest (`--http-max-body`). */
export const DEFAULT_HTTP_MAX_BODY = numberDefault('http-max-body');

/** What a harness may reach, as `HarnessInput.context` carries it to the services. */
export interface EgressContext {
  harness: string;
  declared: GrantSet;
  granted: GrantSet;
  grantedHosts: Map<string, HostPattern[]>;
  declaredHosts: Map<string, HostPattern[]>;
}

export function egressContext(harness: string, declared: GrantSet, granted: GrantSet): EgressContext {
  return { harness, declared, granted, grantedHosts: grantedPatterns(granted), declaredHosts: grantedPatterns(declared) };
}

export interface EgressOptions {
  secrets: Secrets;
  logger: Logger;
  /** Longest response body handed to a guest; longer ones are cut and marked. */
  maxBodyBytes?: number;
  /** `--resolve` entries, for direct requests. */
  resolve?: readonly ResolveEntry[];
  /** The operator's proxy, for `berm.http.proxy`; that syscall is refused without one. */
  httpProxy?: string;
}

/** The answer a guest gets: the response, with a body it can read. */
export interface FetchAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  body_base64?: true;
  truncated?: true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

class Refusal {
  constructor(readonly message: string) {}
}

export class HttpEgress {
  readonly maxBodyBytes: number;
  private readonly secrets: Secrets;
  private readonly logger: Logger;
  private readonly direct: Dispatcher;
  private readonly proxy?: Dispatcher;

  /**
   * Loads undici first: it is imported here rather than with this module, which the egress room's door
   * brings into every bermd, and only a bermd serving an HTTP syscall needs it (docs/decisions.md).
   */
  static async create(options: EgressOptions): Promise<HttpEgress> {
    return new HttpEgress(options, await import('undici'));
  }

  private constructor(options: EgressOptions, undici: typeof import('undici')) {
    this.secrets = options.secrets;
    this.logger = options.logger;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_HTTP_MAX_BODY;
    this.direct = new undici.Agent({ connect: resolvingConnector(undici.buildConnector, options.resolve ?? []) });
    if (options.httpProxy !== undefined) this.proxy = new undici.ProxyAgent({ uri: options.httpProxy });
  }

  /** The services for the runner, one per syscall in `served` that this module serves. */
  services(served: Iterable<string>): Map<string, HostService> {
    const out = new Map<string, HostService>();
    for (const name of served) {
      if (name === FETCH || (name === PROXY && this.proxy !== undefined)) out.set(name, (call) => this.serve(call));
    }
    return out;
  }

  /** Ends every connection, aborting requests under way. */
  async close(): Promise<void> {
    await Promise.all([this.direct.destroy(), this.proxy?.destroy()]);
  }

  async serve(call: HostServiceCall): Promise<HostEnvelope> {
    const { name, harness } = call;
    let request: GuestRequest;
    let substituted: Array<{ name: string; value: string }>;
    try {
      ({ request, substituted } = this.admit(call));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      this.logger.info({ harness, entry: call.entry, principal: call.caller, syscall: name, reason: e.message }, 'refused an http request');
      return { refused: e.message };
    }
    const dispatcher = name === PROXY ? this.proxy! : this.direct;
    const { url } = request;
    const flat: string[] = [];
    const { trace } = call;
    if (trace === undefined) for (const [k, v] of request.headers) flat.push(k, v);
    else {
      // The span bermd sends from is the upstream's parent: a trace header the guest set would name another.
      const carried = trace.sending(request.method, url);
      for (const [k, v] of request.headers) if (!(k.toLowerCase() in carried)) flat.push(k, v);
      for (const [k, v] of Object.entries(carried)) flat.push(k, v);
    }
    try {
      const response = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method as Dispatcher.HttpMethod,
        headers: flat,
        body: request.body,
        signal: call.signal,
      });
      const answer = await this.read(response, substituted);
      trace?.answered(answer.status);
      this.logger.debug(
        {
          harness,
          entry: call.entry,
          principal: call.caller,
          syscall: name,
          method: request.method,
          host: url.host,
          status: answer.status,
          truncated: answer.truncated === true,
        },
        'http request',
      );
      return { ok: answer };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      const why = this.secrets.redact(e instanceof Error ? e.message : String(e));
      trace?.failed(why);
      // undici checks what it is given before it connects: such a request was never sent.
      if (code === 'UND_ERR_INVALID_ARG') return { refused: `${name}: ${why}` };
      const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
      const detail = cause !== undefined && typeof cause.message === 'string' ? ` (${this.secrets.redact(cause.message)})` : '';
      this.logger.info({ harness, entry: call.entry, principal: call.caller, syscall: name, host: url.host, code }, 'http request failed');
      return { failed: `${name} ${request.method} ${url.host}: ${why}${detail}` };
    }
  }

  /** Every check before sending; throws a `Refusal`. Answers the request with its secrets filled in. */
  private admit(call: HostServiceCall): { request: GuestRequest; substituted: Array<{ name: string; value: string }> } {
    const { name, harness } = call;
    const ctx = call.context as EgressContext | undefined;
    if (ctx === undefined) throw new Refusal(`${name} is not granted to ${harness}`);
    if (name === PROXY && this.proxy === undefined) throw new Refusal(`${name}: this host has no proxy`);
    const granted = ctx.grantedHosts.get(name);
    if (granted === undefined) {
      if (ctx.declaredHosts.has(name)) throw new Refusal(`${harness} declares ${name}, but its operator has not granted it`);
      throw new Refusal(`${harness} does not declare ${name} in deps.syscalls`);
    }
    const request = parseGuestRequest(call.request, name);
    if (typeof request === 'string') throw new Refusal(request);
    const { url } = request;
    if (firstMatch(granted, url) === undefined) {
      const where = `${url.protocol}//${url.host}`;
      if (firstMatch(ctx.declaredHosts.get(name) ?? [], url) !== undefined) {
        throw new Refusal(
          `${where} is declared by ${harness} under ${name}, but its operator has not granted it (granted: ${list(granted)})`,
        );
      }
      throw new Refusal(`${where} is not declared by ${harness} under ${name} (declared: ${list(ctx.declaredHosts.get(name) ?? [])})`);
    }

    const substituted: Array<{ name: string; value: string }> = [];
    for (const secret of secretRefs(request.headers)) {
      if (!ctx.declared.secrets.includes(secret))
        throw new Refusal(`secret ${JSON.stringify(secret)} is not declared in deps.secrets of ${harness}`);
      if (!ctx.granted.secrets.includes(secret))
        throw new Refusal(`secret ${secret} is declared by ${harness}, but its operator has not granted it`);
      const value = this.secrets.lookup(secret, call.entry, call.caller);
      if (typeof value !== 'string') throw new Refusal(unavailable(secret, value.unavailable, call));
      substituted.push({ name: secret, value });
    }
    if (substituted.length > 0) {
      const values = new Map(substituted.map((s) => [s.name, s.value]));
      request.headers = request.headers.map(([k, v]) => [k, v.replace(SECRET_REF, (_m, n: string) => values.get(n)!)]);
    }
    if (request.headers.some(([, v]) => v.includes(IDEMPOTENCY_KEY_REF))) {
      const key = call.idempotencyKey;
      if (key === undefined)
        throw new Refusal(
          `${harness}.${call.tool} has no idempotency key to send as ${IDEMPOTENCY_KEY_REF}: only a call of an external_write tool, and the calls its chain makes, have one`,
        );
      request.headers = request.headers.map(([k, v]) => [k, v.replaceAll(IDEMPOTENCY_KEY_REF, key)]);
    }
    return { request, substituted };
  }

  /** The response as the guest gets it: body read up to the bound, secrets echoed back masked. */
  private async read(response: Dispatcher.ResponseData, substituted: ReadonlyArray<{ name: string; value: string }>): Promise<FetchAnswer> {
    const max = this.maxBodyBytes;
    // Read a little past the bound, so a secret value crossing it is whole when it is masked.
    const slack = Math.max(0, ...substituted.map((s) => Buffer.byteLength(s.value)));
    const chunks: Buffer[] = [];
    let total = 0;
    let stopped = false;
    for await (const chunk of response.body) {
      const bytes = chunk as Buffer;
      chunks.push(bytes);
      total += bytes.length;
      if (total > max + slack) {
        stopped = true;
        break;
      }
    }
    if (!stopped) await response.body.dump().catch(() => {});
    let body: Buffer = Buffer.concat(chunks);
    for (const s of substituted) body = replaceAll(body, Buffer.from(s.value), Buffer.from(`{secret:${s.name}}`));
    const truncated = stopped || body.length > max;
    if (body.length > max) body = body.subarray(0, max);

    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(response.headers)) {
      if (v === undefined) continue;
      headers[k] = Array.isArray(v) ? v.map((x) => mask(x, substituted)) : mask(v, substituted);
    }
    const answer: FetchAnswer = { status: response.statusCode, headers, body: '' };
    const text = decodeText(body, truncated);
    if (text === undefined) {
      answer.body = body.toString('base64');
      answer.body_base64 = true;
    } else {
      answer.body = text;
    }
    if (truncated) answer.truncated = true;
    return answer;
  }
}

/** Why `secret` is not substituted for `call`: names the secret and the principal, never a value nor who else holds one. */
function unavailable(secret: string, why: SecretUnavailable, call: HostServiceCall): string {
  switch (why) {
    case 'out-of-scope':
      return `secret ${secret} is not provided for calls that enter through ${call.entry}`;
    case 'not-for-principal':
      return `secret ${secret} is not provided for principal ${call.caller}: its operator gives it to named principals only (see --secrets)`;
    case 'no-principal':
      return `secret ${secret} is given to named principals only, and this call is bermd's own, made for none`;
    case 'not-provided':
      return `secret ${secret} is not provided by this host's operator`;
  }
}

function list(patterns: readonly HostPattern[]): string {
  return patterns.length === 0 ? 'none' : patterns.map((p) => p.text).join(', ');
}

function mask(text: string, substituted: ReadonlyArray<{ name: string; value: string }>): string {
  let out = text;
  for (const s of substituted) if (out.includes(s.value)) out = out.split(s.value).join(`{secret:${s.name}}`);
  return out;
}

function replaceAll(haystack: Buffer, needle: Buffer, replacement: Buffer): Buffer {
  let at = haystack.indexOf(needle);
  if (at < 0) return haystack;
  const parts: Uint8Array[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(haystack.subarray(from, at), replacement);
    from = at + needle.length;
    at = haystack.indexOf(needle, from);
  }
  parts.push(haystack.subarray(from));
  return Buffer.concat(parts);
}

/** The body as text when it is UTF-8 (a cut body may end inside a character, which is dropped); undefined otherwise. */
function decodeText(body: Buffer, truncated: boolean): string | undefined {
  for (let drop = 0; drop <= (truncated ? 3 : 0) && drop <= body.length; drop++) {
    try {
      return utf8.decode(body.subarray(0, body.length - drop));
    } catch {
      // try one byte shorter
    }
  }
  return undefined;
}
