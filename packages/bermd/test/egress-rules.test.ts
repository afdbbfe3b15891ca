// The rules the HTTP syscalls and deploy bindings apply, read piece by piece: host patterns and what
// they cover, grants, --resolve, the secrets file and its redaction, and the guest's request.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Manifest } from '@berm/manifest';
import { BermdError, Secrets, SecretsFileError } from 'bermd';
import { grantsFromSpecs, parseBindingQuery, parseGrant } from '../dist/deploy/index.js';
import {
  covers,
  matchesUrl,
  parseGuestRequest,
  parseHostPattern,
  parseResolve,
  secretRefs,
  type HostPattern,
} from '../dist/egress/index.js';
import { logSink } from '../dist/log.js';
import { httpManifest } from '../../../test/helpers/guest.js';

function pattern(text: string): HostPattern {
  const p = parseHostPattern(text);
  if (typeof p === 'string') throw new Error(p);
  return p;
}

function thrown(fn: () => unknown): BermdError {
  try {
    fn();
  } catch (e) {
    if (e instanceof BermdError) return e;
    throw e;
  }
  throw new Error('expected a BermdError');
}

describe('host patterns', () => {
  const cases: Array<[string, string, boolean]> = [
    ['api.example.com', 'https://api.example.com/v1', true],
    ['api.example.com', 'http://API.EXAMPLE.com/', true],
    ['api.example.com', 'https://api.example.com:443/', true],
    // A bare name is the scheme's default port only.
    ['api.example.com', 'https://api.example.com:8443/', false],
    ['api.example.com', 'http://api.example.com:443/', false],
    ['api.example.com', 'https://api.example.com.evil.net/', false],
    ['api.example.com', 'https://evilapi.example.com/', false],
    ['api.example.com', 'https://api.example.com./', false],
    ['api.example.com:8443', 'https://api.example.com:8443/', true],
    ['api.example.com:8443', 'https://api.example.com/', false],
    ['api.example.com:*', 'http://api.example.com:1234/', true],
    ['*.example.com', 'https://a.example.com/', true],
    ['*.example.com', 'https://a.b.example.com/', true],
    ['*.example.com', 'https://example.com/', false],
    ['*.example.com', 'https://badexample.com/', false],
    ['127.0.0.1:8080', 'http://127.0.0.1:8080/', true],
    ['[::1]:8080', 'http://[::1]:8080/', true],
    ['[::1]:8080', 'http://[::1]:8081/', false],
  ];
  it('match names exactly and case-insensitively, and ports as written (a bare name: the default port)', () => {
    for (const [p, url, expected] of cases) expect([p, url, matchesUrl(pattern(p), new URL(url))]).toEqual([p, url, expected]);
  });

  it('refuse what is not a pattern', () => {
    for (const bad of [
      'http://api.example.com',
      'api.*.com',
      '*',
      'a b',
      'api.example.com:0',
      'api.example.com:99999',
      '*.127.0.0.1',
      'user@host',
      '',
    ]) {
      expect(typeof parseHostPattern(bad), bad).toBe('string');
    }
    expect(pattern('API.Example.COM:443').text).toBe('api.example.com:443');
  });

  it('cover a narrower pattern, never a wider one', () => {
    expect(covers(pattern('*.example.com'), pattern('api.example.com'))).toBe(true);
    expect(covers(pattern('*.example.com'), pattern('*.api.example.com'))).toBe(true);
    expect(covers(pattern('*.example.com'), pattern('*.example.com'))).toBe(true);
    expect(covers(pattern('*.example.com'), pattern('example.com'))).toBe(false);
    expect(covers(pattern('api.example.com'), pattern('*.api.example.com'))).toBe(false);
    expect(covers(pattern('api.example.com:*'), pattern('api.example.com:8443'))).toBe(true);
    expect(covers(pattern('api.example.com:8443'), pattern('api.example.com:*'))).toBe(false);
    expect(covers(pattern('api.example.com'), pattern('api.example.com:443'))).toBe(false);
  });
});

describe('grants', () => {
  const manifest = Manifest.fromJSON(httpManifest({ fetch: ['*.example.com', 'api.example.net:8443'], secrets: ['a', 'b'] }));

  it('read syscall=, NAME=HOSTS, secret= and none', () => {
    expect(parseGrant('syscall=berm.http.fetch')).toEqual({
      kind: 'syscall',
      syscalls: ['berm.http.fetch'],
      text: 'syscall=berm.http.fetch',
    });
    expect(parseGrant('berm.http.fetch=a.example.com, b.example.com')).toMatchObject({
      kind: 'hosts',
      syscall: 'berm.http.fetch',
      hosts: ['a.example.com', 'b.example.com'],
    });
    expect(parseGrant('secret=a,b')).toMatchObject({ kind: 'secret', names: ['a', 'b'] });
    expect(parseGrant(' none ')).toMatchObject({ kind: 'none' });
    for (const bad of [
      'everything',
      'secret=',
      'syscall=berm.log',
      'berm.call=x',
      'fetch=api.example.com',
      'berm.http.fetch=ftp://x',
      'syscall=nodots',
    ]) {
      expect(thrown(() => parseGrant(bad)).code, bad).toBe('bad-grant');
    }
  });

  it('narrow what is declared, union what repeats, and refuse what is not declared', () => {
    const specs = ['berm.http.fetch=API.example.com', 'berm.http.fetch=api.example.com,*.deep.example.com', 'secret=b'].map(parseGrant);
    expect(grantsFromSpecs(specs, manifest)).toEqual({
      syscalls: { 'berm.http.fetch': ['api.example.com', '*.deep.example.com'] },
      secrets: ['b'],
    });
    expect(grantsFromSpecs([parseGrant('syscall=berm.http.fetch')], manifest)).toEqual({
      syscalls: { 'berm.http.fetch': ['*.example.com', 'api.example.net:8443'] },
      secrets: [],
    });
    expect(grantsFromSpecs([parseGrant('none')], manifest)).toEqual({ syscalls: {}, secrets: [] });
    const e = thrown(() =>
      grantsFromSpecs(['berm.http.fetch=api.example.net', 'secret=c', 'syscall=berm.http.proxy'].map(parseGrant), manifest),
    );
    expect(e.code).toBe('grant-not-declared');
    expect((e.details.problems as unknown[]).length).toBe(3);
  });

  it('come with limits as query parameters', () => {
    expect(thrown(() => parseBindingQuery({ grant: ['secret=a', 'none'] })).code).toBe('bad-grant');
    expect(parseBindingQuery({ timeout: '1.5s', max_memory: '1M', max_result_size: '2K', grant: 'secret=a' })).toEqual({
      timeout: 1500,
      max_memory: 1024 * 1024,
      max_result_size: 2048,
      grants: [{ kind: 'secret', names: ['a'], text: 'secret=a' }],
    });
    expect(thrown(() => parseBindingQuery({ timeout: 'later' })).code).toBe('bad-limit');
    expect(thrown(() => parseBindingQuery({ grants: 'secret=a' })).code).toBe('bad-request');
  });
});

describe('--resolve', () => {
  it('reads HOST:PORT:ADDRESS, IPv6 in brackets or not', () => {
    expect(parseResolve('API.example.com:443:127.0.0.1')).toEqual({ host: 'api.example.com', port: 443, address: '127.0.0.1' });
    expect(parseResolve('api.example.com:8080:[::1]')).toEqual({ host: 'api.example.com', port: 8080, address: '::1' });
    for (const bad of [
      'api.example.com:443',
      'api.example.com:x:127.0.0.1',
      'api.example.com:443:not-an-ip',
      '*.example.com:443:127.0.0.1',
      'api.example.com:0:127.0.0.1',
    ]) {
      expect(() => parseResolve(bad), bad).toThrow(/^--resolve /);
    }
  });
});

describe('the secrets file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bermd-secrets-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('holds values for every harness or for some, and says which is missing', () => {
    const secrets = Secrets.parse(JSON.stringify({ open: 'v-open', scoped: { value: 'v-scoped', harnesses: ['a'] } }));
    expect(secrets.lookup('open', 'z')).toBe('v-open');
    expect(secrets.lookup('scoped', 'a')).toBe('v-scoped');
    expect(secrets.lookup('scoped', 'b')).toEqual({ unavailable: 'out-of-scope' });
    expect(secrets.lookup('nope', 'a')).toEqual({ unavailable: 'not-provided' });
    for (const bad of [
      '[]',
      '{"a": 1}',
      '{"a": ""}',
      '{"a b": "v"}',
      '{"a": {"value": "v", "harnesses": ["no.dots"]}}',
      '{"a": {"value": "v", "extra": 1}}',
    ]) {
      expect(() => Secrets.parse(bad), bad).toThrow(SecretsFileError);
    }
  });

  it('is refused when group or others have any access to it, or when it is not JSON, without quoting it', async () => {
    const file = path.join(dir, 'secrets.json');
    await writeFile(file, '{"k": "hunter2-value"}');
    for (const mode of [0o640, 0o604, 0o620, 0o602]) {
      await chmod(file, mode);
      await expect(Secrets.load(file), mode.toString(8)).rejects.toThrow(/is accessible to group or others/);
    }
    await chmod(file, 0o600);
    expect((await Secrets.load(file)).lookup('k', 'any')).toBe('hunter2-value');
    await writeFile(file, '{"k": hunter2-value}');
    const e = await Secrets.load(file).catch((x: Error) => x);
    expect(e).toBeInstanceOf(SecretsFileError);
    expect((e as Error).message).not.toContain('hunter2');
  });

  it('redacts values, raw and JSON-escaped, from what is written', () => {
    const secrets = Secrets.parse(JSON.stringify({ plain: 'p1a1n-value', quoted: 'has "quotes" and \\' }));
    const lines: string[] = [];
    const stream = logSink({ write: (l: string) => lines.push(l) }, secrets);
    stream.write(`${JSON.stringify({ msg: 'failed', err: 'header was p1a1n-value', other: 'has "quotes" and \\' })}\n`);
    expect(lines[0]).toBe(`${JSON.stringify({ msg: 'failed', err: 'header was [secret:plain]', other: '[secret:quoted]' })}\n`);
    expect(secrets.leaks(lines[0]!)).toBe(false);
  });

  it('finds a value holding C1 before the log escapes it, and escapes the rest', () => {
    const secrets = Secrets.parse(JSON.stringify({ odd: 'c1\u0085-value' }));
    const lines: string[] = [];
    const sink = logSink({ write: (l: string) => lines.push(l) }, secrets);
    sink.write(`${JSON.stringify({ msg: 'sent c1\u0085-value then \u009b2J' })}\n`);
    expect(lines).toEqual([`${JSON.stringify({ msg: 'sent [secret:odd] then ' }).slice(0, -2)}\\u009b2J"}\n`]);
    expect(JSON.parse(lines[0]!)).toEqual({ msg: 'sent [secret:odd] then \u009b2J' });
  });

  it('takes new secrets in place, says which names changed, and keeps redacting the values it held', () => {
    const secrets = Secrets.parse(
      JSON.stringify({ kept: 'k-value', rotated: 'old-value', dropped: 'd-value', scoped: { value: 'sc-value', harnesses: ['a'] } }),
    );
    const next = Secrets.parse(
      JSON.stringify({ kept: 'k-value', rotated: 'new-value', added: 'a-value', scoped: { value: 'sc-value', harnesses: ['b'] } }),
    );
    expect(secrets.replace(next)).toEqual({ added: ['added'], removed: ['dropped'], changed: ['rotated', 'scoped'] });
    expect([secrets.lookup('rotated', 'x'), secrets.lookup('added', 'x'), secrets.lookup('dropped', 'x')]).toEqual([
      'new-value',
      'a-value',
      { unavailable: 'not-provided' },
    ]);
    expect(secrets.availableTo('scoped', 'b')).toBe(true);
    expect(secrets.availableTo('scoped', 'a')).toBe(false);
    expect(secrets.redact('old-value new-value d-value k-value')).toBe('[secret:rotated] [secret:rotated] [secret:dropped] [secret:kept]');
  });

  it("hides the operator's own values (the store's password) from the log, through a rotation, and offers them to no call", () => {
    const secrets = Secrets.parse(JSON.stringify({ api: 'api-value' })).hide('store password', 'pg-pa55');
    expect(secrets.has('store password')).toBe(false);
    expect(secrets.redact('connect with pg-pa55 and api-value')).toBe('connect with [store password] and [secret:api]');
    secrets.replace(Secrets.parse(JSON.stringify({ api: 'api-next' })));
    expect(secrets.redact('pg-pa55 api-value api-next')).toBe('[store password] [secret:api] [secret:api]');
    expect(Secrets.none().redact('pg-pa55 api-value')).toBe('pg-pa55 api-value');
  });
});

describe("the guest's request", () => {
  it('takes method, url, headers and a text or base64 body, and refuses what it does not know', () => {
    const r = parseGuestRequest(
      {
        method: 'POST',
        url: 'https://api.example.com/a?b#frag',
        headers: { 'X-A': ['1', '2'], b: 'Bearer {secret:k}' },
        body: 'aGk=',
        body_base64: true,
      },
      'berm.http.fetch',
    );
    if (typeof r === 'string') throw new Error(r);
    expect(r.url.href).toBe('https://api.example.com/a?b');
    expect(r.headers).toEqual([
      ['x-a', '1'],
      ['x-a', '2'],
      ['b', 'Bearer {secret:k}'],
    ]);
    expect(r.body?.toString()).toBe('hi');
    expect(secretRefs(r.headers)).toEqual(['k']);
    const refusals: Array<[unknown, RegExp]> = [
      ['x', /^a berm.http.fetch request is/],
      [{ url: 'https://a/', extra: 1 }, /unknown member "extra"/],
      [{ url: 'https://a/', method: 'CONNECT' }, /CONNECT is not sent/],
      [{ url: 'https://a/', method: 'GE T' }, /is not an HTTP method/],
      [{ url: '/relative' }, /is not an absolute URL/],
      [{ url: 'file:///etc/passwd' }, /only http: and https:/],
      [{ url: 'https://a/', headers: { 'transfer-encoding': 'chunked' } }, /is the host's to set/],
      [{ url: 'https://a/', headers: { 'proxy-authorization': 'x' } }, /is the host's to set/],
      [{ url: 'https://a/', headers: { a: 'x\r\nb: y' } }, /may not hold CR, LF or NUL/],
      [{ url: 'https://a/', headers: { a: 1 } }, /values are strings/],
      [{ url: 'https://a/', body: 'not base64!', body_base64: true }, /is not base64/],
      [{ url: 'https://a/', body: 5 }, /body must be a string/],
    ];
    for (const [value, why] of refusals) expect(parseGuestRequest(value, 'berm.http.fetch'), JSON.stringify(value)).toMatch(why);
  });
});
