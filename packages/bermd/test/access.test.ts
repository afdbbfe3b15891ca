// Static principals end to end: a real bermd started with `--access FILE`, real HTTP. Each control route
// with each scope (berm:read alone reads and is refused deploys and undeploys naming berm:deploy, storing
// nothing; berm:deploy without berm:force deploys but is refused ?force=true naming berm:force, changing
// nothing; GET /events and the reads need berm:read); GET /whoami for any principal; 401 for a token the
// file does not hold; the log naming who made each request and who deployed; `bermd token new`; SIGHUP
// reading the file again; and a bad file refusing the start.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { HarnessChange } from '@berm/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newToken } from '../dist/auth/index.js';
import { digestOf } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { readSse } from '../../ui/web/src/sse.js';
import { type AccessFile, as, bearer, errorOf, writeAccess } from './access.js';
import { exited, launchDaemon, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { put } from './mcp-client.js';
import { within } from './replicas.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const PRINCIPALS = [
  { name: 'reader', scopes: ['berm:read'] },
  { name: 'deployer', scopes: ['berm:read', 'berm:deploy'] },
  { name: 'forcer', scopes: ['berm:read', 'berm:deploy', 'berm:force'] },
  { name: 'caller', scopes: ['berm:call'] },
  { name: 'two-harnesses', scopes: ['berm:call:zeta', 'berm:read', 'berm:call:alpha'] },
];

/** What the 403 for a missing `scope` says, in its body and its challenge (which asks for what the principal holds, and `scope`). */
async function expectRefused(res: Response, principal: string, scope: string): Promise<void> {
  expect(res.status).toBe(403);
  const held = PRINCIPALS.find((p) => p.name === principal)!.scopes;
  expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${[...held, scope].join(' ')}"`);
  const error = await errorOf(res);
  expect(error).toMatchObject({ code: 'insufficient-scope', scope });
  expect(error.message).toBe(`${principal} does not hold the scope ${scope} this request needs`);
}

describe('bermd --access: each route with each scope', { timeout: 120_000 }, () => {
  let dir: string;
  let access: AccessFile;
  let d: RunningDaemon;
  const token = (name: string): string => access.tokens[name]!;
  const at = (p: string): string => `${d.url}${p}`;

  beforeAll(async () => {
    dir = await tempDir('bermd-access-');
    access = await writeAccess(dir, PRINCIPALS);
    // Debug, so the lines a plugin writes for a request (the change stream's) are there to read too.
    d = await startDaemon({ args: ['--access', access.file, '--log-level', 'debug'] });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    await removeDir(dir);
  });

  it('berm:read alone reads; a deploy, a dry run and an undeploy are refused naming berm:deploy, and nothing is stored or removed', async () => {
    const bytes = await harnessImage(manifestWithTools(['a']));
    expect((await put(at('/harnesses/read-1'), bytes, bearer(token('deployer')))).status).toBe(201);

    const list = (await (await as(token('reader'), at('/harnesses'))).json()) as { name: string; deployed_by: string }[];
    expect(list.find((h) => h.name === 'read-1')?.deployed_by).toBe('deployer');
    expect(((await (await as(token('reader'), at('/harnesses/read-1'))).json()) as { digest: string }).digest).toBe(digestOf(bytes));
    const image = await as(token('reader'), at('/harnesses/read-1/image'));
    expect(image.status).toBe(200);
    expect(digestOf(new Uint8Array(await image.arrayBuffer()))).toBe(digestOf(bytes));

    await expectRefused(await put(at('/harnesses/read-2'), bytes, bearer(token('reader'))), 'reader', 'berm:deploy');
    await expectRefused(await put(at('/harnesses/read-1?dry-run=true'), bytes, bearer(token('reader'))), 'reader', 'berm:deploy');
    await expectRefused(await as(token('reader'), at('/harnesses/read-1'), { method: 'DELETE' }), 'reader', 'berm:deploy');

    expect((await as(token('reader'), at('/harnesses/read-2'))).status).toBe(404);
    expect(existsSync(path.join(d.stateDir, 'harnesses', 'read-2.wasm'))).toBe(false);
    expect((await as(token('reader'), at('/harnesses/read-1'))).status).toBe(200);
    expect(existsSync(path.join(d.stateDir, 'harnesses', 'read-1.wasm'))).toBe(true);
  });

  it('berm:deploy without berm:force: a plain deploy passes; ?force=true, dry run or not, is refused naming berm:force and changes nothing', async () => {
    const one = await harnessImage(manifestWithTools(['a']));
    const two = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.2.0' }));
    const three = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.3.0' }));
    expect((await put(at('/harnesses/force-1'), one, bearer(token('deployer')))).status).toBe(201);

    await expectRefused(await put(at('/harnesses/force-1?force=true'), two, bearer(token('deployer'))), 'deployer', 'berm:force');
    await expectRefused(
      await put(at('/harnesses/force-1?dry-run=true&force=true'), two, bearer(token('deployer'))),
      'deployer',
      'berm:force',
    );
    const after = (await (await as(token('deployer'), at('/harnesses/force-1'))).json()) as { digest: string; version: string };
    expect([after.digest, after.version]).toEqual([digestOf(one), '0.1.0']);

    expect((await put(at('/harnesses/force-1'), two, bearer(token('deployer')))).status).toBe(200);
    expect((await put(at('/harnesses/force-1?force=true'), three, bearer(token('forcer')))).status).toBe(200);
    const forced = (await (await as(token('reader'), at('/harnesses/force-1'))).json()) as { digest: string; deployed_by: string };
    expect([forced.digest, forced.deployed_by]).toEqual([digestOf(three), 'forcer']);

    expect((await as(token('deployer'), at('/harnesses/force-1'), { method: 'DELETE' })).status).toBe(204);
  });

  it('GET /events and every read need berm:read: a principal without it is refused naming it; one with it follows the stream', async () => {
    for (const p of ['/events', '/harnesses', '/harnesses/any', '/harnesses/any/image'])
      await expectRefused(await as(token('caller'), at(p)), 'caller', 'berm:read');

    const res = await as(token('reader'), at('/events'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const messages = readSse(res.body!);
    try {
      expect((await put(at('/harnesses/events-1'), await harnessImage(), bearer(token('deployer')))).status).toBe(201);
      const { value } = await within('the deploy on the stream', messages.next());
      expect(JSON.parse(value!.data) as HarnessChange).toEqual({ type: 'deployed', name: 'events-1', replaced: false });
    } finally {
      await messages.return(undefined);
    }
  });

  it('GET /whoami answers any principal its name and scopes, and needs no scope', async () => {
    const said: Record<string, unknown> = {};
    for (const { name } of PRINCIPALS) {
      const res = await as(token(name), at('/whoami'));
      expect([name, res.status]).toEqual([name, 200]);
      said[name] = await res.json();
    }
    expect(said).toEqual({
      reader: { name: 'reader', scopes: ['berm:read'] },
      deployer: { name: 'deployer', scopes: ['berm:read', 'berm:deploy'] },
      forcer: { name: 'forcer', scopes: ['berm:read', 'berm:deploy', 'berm:force'] },
      caller: { name: 'caller', scopes: ['berm:call'] },
      // The fixed scopes in their order, then a harness's own, sorted.
      'two-harnesses': { name: 'two-harnesses', scopes: ['berm:read', 'berm:call:alpha', 'berm:call:zeta'] },
    });
  });

  it('a token the file does not hold is 401 with the invalid_token challenge; no token, 401 with the bare one', async () => {
    for (const p of ['/whoami', '/harnesses', '/events']) {
      const stranger = await as(newToken(), at(p));
      expect([p, stranger.status]).toEqual([p, 401]);
      expect(stranger.headers.get('www-authenticate')).toBe(
        'Bearer error="invalid_token", error_description="the token is not one this bermd holds"',
      );
      expect((await errorOf(stranger)).code).toBe('unauthorized');
      const none = await as(undefined, at(p));
      expect([p, none.status]).toEqual([p, 401]);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect((await errorOf(none)).code).toBe('unauthorized');
    }
  });

  it("the log names who made each request on every line after its token is read, the reply's included, and who deployed and undeployed", async () => {
    expect((await put(at('/harnesses/log-1'), await harnessImage(), bearer(token('deployer')))).status).toBe(201);
    await expectRefused(await as(token('reader'), at('/harnesses/log-1'), { method: 'DELETE' }), 'reader', 'berm:deploy');
    expect((await as(token('forcer'), at('/harnesses/log-1'), { method: 'DELETE' })).status).toBe(204);
    const stream = await as(token('reader'), at('/events'));
    expect(stream.status).toBe(200);
    // Its first bytes say it is subscribed; then it is left, as a page leaves it.
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await within('the stream opening', reader.read())).value)).toContain(': subscribed');
    await reader.cancel();

    expect(await d.waitForLog((e) => e.msg === 'deployed harness' && e.harness === 'log-1')).toMatchObject({ principal: 'deployer' });
    expect(await d.waitForLog((e) => e.msg === 'undeployed harness' && e.harness === 'log-1')).toMatchObject({ principal: 'forcer' });

    // Each request's lines, once its last is written: "request completed", or for the hijacked event
    // stream, its close. The first, written as the request arrives, comes before its token is read.
    type Line = Record<string, unknown>;
    const began = (e: Line, method: string, url: string): boolean =>
      e.msg === 'incoming request' && (e.req as { method: string }).method === method && (e.req as { url: string }).url === url;
    for (const [method, url, last, status, principal] of [
      ['PUT', '/harnesses/log-1', 'request completed', 201, 'deployer'],
      ['DELETE', '/harnesses/log-1', 'request completed', 403, 'reader'],
      ['DELETE', '/harnesses/log-1', 'request completed', 204, 'forcer'],
      ['GET', '/events', 'change stream closed', undefined, 'reader'],
    ] as const) {
      const ended = await within(
        `the last line of ${method} ${url}`,
        d.waitForLog(
          (e) =>
            e.msg === last &&
            (status === undefined || (e.res as { statusCode: number }).statusCode === status) &&
            d.log().some((i) => i.reqId === e.reqId && began(i, method, url)),
        ),
      );
      const lines = d.log().filter((e) => e.reqId === ended.reqId);
      expect(began(lines[0]!, method, url)).toBe(true);
      expect(lines[0]!.principal).toBeUndefined();
      const after = lines.slice(1).map((l) => [l.msg, l.principal]);
      expect(after.map(([msg]) => msg)).toContain(last);
      expect([method, url, after]).toEqual([method, url, after.map(([msg]) => [msg, principal])]);
    }

    // Nothing the daemon wrote holds a token or a token's hash.
    for (const t of Object.values(access.tokens)) {
      expect(d.stderr()).not.toContain(t);
      expect(d.stderr()).not.toContain(sha256(t));
    }
  });
});

/** Runs `bermd ARGS` to its end: its exit code and what it wrote. */
async function bermd(...args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const run = await launchDaemon({ command: args });
  const code = await exited(run.process);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

const TOKEN_LINE = /^berm_[A-Za-z0-9_-]{43}\n$/;

describe('bermd token new', { timeout: 120_000 }, () => {
  let dir: string;
  const daemons: RunningDaemon[] = [];
  beforeEach(async () => {
    dir = await tempDir('bermd-token-');
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) {
      await d.stop();
      await removeDir(d.stateDir);
    }
    await removeDir(dir);
  });

  it('prints a fresh token once, on stdout; the file it creates holds its SHA-256 alone, mode 0600; the token works against a bermd started with it', async () => {
    const file = path.join(dir, 'access.json');
    const made = await bermd('token', 'new', 'ci', '--scope', 'berm:read', '--scope', 'berm:deploy', '--access', file);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(TOKEN_LINE);
    const token = made.stdout.trim();
    expect(made.stderr).toContain(`ci holds berm:read berm:deploy in ${file}`);
    expect(made.stderr).not.toContain(token);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(token);
    expect(JSON.parse(text)).toEqual([{ name: 'ci', token_sha256: sha256(token), scopes: ['berm:read', 'berm:deploy'] }]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // Another is a new token, added beside the first.
    const second = await bermd('token', 'new', 'viewer', '--scope', 'berm:read', '--access', file);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).not.toBe(token);
    expect((JSON.parse(await readFile(file, 'utf8')) as { name: string }[]).map((e) => e.name)).toEqual(['ci', 'viewer']);

    const d = await startDaemon({ args: ['--access', file] });
    daemons.push(d);
    expect(await (await as(token, `${d.url}/whoami`)).json()).toEqual({ name: 'ci', scopes: ['berm:read', 'berm:deploy'] });
    expect((await put(`${d.url}/harnesses/h`, await harnessImage(), bearer(token))).status).toBe(201);
    expect(await d.waitForLog((e) => e.msg === 'deployed harness')).toMatchObject({ harness: 'h', principal: 'ci' });
  });

  it('without --access, prints the token on stdout and the entry to add on stderr, its hash alone', async () => {
    const made = await bermd('token', 'new', 'ci', '--scope', 'berm:call:weather,berm:read');
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(TOKEN_LINE);
    const token = made.stdout.trim();
    expect(made.stderr).not.toContain(token);
    const entry = made.stderr.split('\n').find((l) => l.startsWith('{'));
    expect(JSON.parse(entry!)).toEqual({ name: 'ci', token_sha256: sha256(token), scopes: ['berm:call:weather', 'berm:read'] });
  });

  it('--replace gives a principal a new token and scopes; without it the name is refused (exit 2), the file as it was', async () => {
    const file = path.join(dir, 'access.json');
    const first = await bermd('token', 'new', 'ci', '--scope', 'berm:read', '--access', file);
    expect(first.code).toBe(0);
    const before = await readFile(file, 'utf8');

    const again = await bermd('token', 'new', 'ci', '--scope', 'berm:deploy', '--access', file);
    expect(again.code).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(`${file} already holds a principal named ci: give --replace to give it a new token`);
    expect(await readFile(file, 'utf8')).toBe(before);

    const d = await startDaemon({ args: ['--access', file] });
    daemons.push(d);
    const replaced = await bermd('token', 'new', 'ci', '--replace', '--scope', 'berm:read,berm:deploy', '--access', file);
    expect(replaced.code).toBe(0);
    const token = replaced.stdout.trim();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual([
      { name: 'ci', token_sha256: sha256(token), scopes: ['berm:read', 'berm:deploy'] },
    ]);
    d.process.kill('SIGHUP');
    expect(
      await within(
        'the reload',
        d.waitForLog((e) => e.msg === 'SIGHUP: principals read again'),
      ),
    ).toMatchObject({
      added: [],
      removed: [],
      changed: ['ci'],
      held: 1,
    });
    expect((await as(first.stdout.trim(), `${d.url}/whoami`)).status).toBe(401);
    expect(await (await as(token, `${d.url}/whoami`)).json()).toEqual({ name: 'ci', scopes: ['berm:read', 'berm:deploy'] });
  });

  it('refuses a bad name, an unknown scope, no scope and a bad command line (exit 2), writing nothing', async () => {
    const file = path.join(dir, 'access.json');
    for (const [args, said] of [
      [['new', 'two words', '--scope', 'berm:read'], '"two words": a name is 1 to 128 letters'],
      [['new', '.dot', '--scope', 'berm:read'], '".dot": a name is 1 to 128 letters'],
      [['new', 'x'.repeat(129), '--scope', 'berm:read'], 'a name is 1 to 128 letters'],
      [['new', 'ci', '--scope', 'berm:write'], '--scope berm:write: unknown scope'],
      [['new', 'ci', '--scope', 'berm:call:not.a.name'], '--scope berm:call:not.a.name: unknown scope'],
      [['new', 'ci'], 'ci: give at least one --scope'],
      [['new'], 'expected: bermd token new NAME --scope SCOPE'],
      [['old', 'ci', '--scope', 'berm:read'], 'expected: bermd token new NAME --scope SCOPE'],
      [['new', 'ci', '--scope', 'berm:read', '--colour'], "Unknown option '--colour'"],
    ] as const) {
      const r = await bermd('token', ...args, '--access', file);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(said);
      expect(r.stderr).toContain('usage: bermd token new NAME --scope SCOPE...');
      expect(existsSync(file)).toBe(false);
    }
  });
});

describe('SIGHUP reads the access file again', { timeout: 120_000 }, () => {
  let dir: string;
  let d: RunningDaemon | undefined;
  beforeEach(async () => {
    dir = await tempDir('bermd-reload-');
  });
  afterEach(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    d = undefined;
    await removeDir(dir);
  });

  it('a principal added works, one removed is refused, one changed holds its new scopes; the log names them, never a token or a hash', async () => {
    const first = await writeAccess(dir, [
      { name: 'kept', scopes: ['berm:read'] },
      { name: 'gone', scopes: ['berm:read'] },
      { name: 'changed', scopes: ['berm:read'] },
    ]);
    d = await startDaemon({ args: ['--access', first.file] });
    expect((await as(first.tokens.gone, `${d.url}/whoami`)).status).toBe(200);

    const next = await writeAccess(
      dir,
      [
        { name: 'kept', scopes: ['berm:read'] },
        { name: 'changed', scopes: ['berm:read', 'berm:deploy'] },
        { name: 'added', scopes: ['berm:read'] },
      ],
      { kept: first.tokens.kept!, changed: first.tokens.changed! },
    );
    d.process.kill('SIGHUP');
    const reloaded = await within(
      'the reload',
      d.waitForLog((e) => e.msg === 'SIGHUP: principals read again'),
    );
    expect(reloaded).toMatchObject({ added: ['added'], removed: ['gone'], changed: ['changed'], held: 3, level: 30 });

    expect(await (await as(next.tokens.added, `${d.url}/whoami`)).json()).toEqual({ name: 'added', scopes: ['berm:read'] });
    const gone = await as(first.tokens.gone, `${d.url}/whoami`);
    expect(gone.status).toBe(401);
    expect(gone.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await (await as(first.tokens.changed, `${d.url}/whoami`)).json()).toEqual({
      name: 'changed',
      scopes: ['berm:read', 'berm:deploy'],
    });
    expect((await as(first.tokens.kept, `${d.url}/whoami`)).status).toBe(200);
    for (const t of [...Object.values(first.tokens), ...Object.values(next.tokens)]) {
      expect(d.stderr()).not.toContain(t);
      expect(d.stderr()).not.toContain(sha256(t));
    }
  });

  it('a file that no longer reads keeps the principals held, and the log says why', async () => {
    const access = await writeAccess(dir, [{ name: 'kept', scopes: ['berm:read'] }]);
    d = await startDaemon({ args: ['--access', access.file] });
    const kept = `SIGHUP: the access file could not be read; the principals held are kept`;

    await writeFile(access.file, '[{"name": "kept",');
    d.process.kill('SIGHUP');
    const broken = await within(
      'the refused reload',
      d.waitForLog((e) => e.msg === kept),
    );
    expect(broken).toMatchObject({ level: 50 });
    expect(broken.reason).toContain(`--access ${access.file}: not JSON`);
    expect(await (await as(access.tokens.kept, `${d.url}/whoami`)).json()).toEqual({ name: 'kept', scopes: ['berm:read'] });

    await writeFile(
      access.file,
      JSON.stringify([
        { name: 'kept', token_sha256: sha256(access.tokens.kept!), scopes: ['berm:read'] },
        { name: 'new', token_sha256: sha256(newToken()), scopes: ['berm:write'] },
      ]),
    );
    d.process.kill('SIGHUP');
    const strange = await within(
      'the second refused reload',
      d.waitForLog((e) => e.msg === kept && String(e.reason).includes('entry 1')),
    );
    expect(strange.reason).toBe(
      `--access ${access.file}: entry 1 (new): unknown scope "berm:write"; use berm:read, berm:deploy, berm:force, berm:call or berm:call:NAME`,
    );
    expect((await as(access.tokens.kept, `${d.url}/whoami`)).status).toBe(200);
    expect(d.log().filter((e) => e.msg === 'SIGHUP: principals read again')).toEqual([]);
    expect(d.stderr()).not.toContain(access.tokens.kept);
    expect(d.stderr()).not.toContain(sha256(access.tokens.kept!));
  });
});

describe('--access with a bad file refuses the start', { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('bermd-bad-access-');
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  it('exits 2 before listening, naming the file and the entry', async () => {
    const file = path.join(dir, 'access.json');
    const hash = sha256(newToken());
    const cases: [unknown, string][] = [
      [
        [
          { name: 'alice', token_sha256: hash, scopes: ['berm:read'] },
          { name: 'bob', token_sha256: sha256(newToken()), scopes: ['berm:write'] },
        ],
        `--access ${file}: entry 1 (bob): unknown scope "berm:write"`,
      ],
      [
        [
          { name: 'alice', token_sha256: hash, scopes: ['berm:read'] },
          { name: 'alice', token_sha256: sha256(newToken()), scopes: ['berm:read'] },
        ],
        `--access ${file}: entry 1: the name alice is given twice`,
      ],
      [[{ name: 'alice', token_sha256: 'not-hex', scopes: [] }], `--access ${file}: entry 0 (alice): "token_sha256" must be the 64`],
      [[{ name: 'alice', token: 'berm_x', scopes: [] }], `--access ${file}: entry 0: unknown member "token"`],
      [{ alice: hash }, `--access ${file}: expected a JSON array`],
    ];
    for (const [content, said] of cases) {
      await writeFile(file, JSON.stringify(content));
      const start = await launchDaemon({ args: ['--access', file] });
      expect([said, await exited(start.process)]).toEqual([said, 2]);
      expect(start.stdout()).toBe('');
      expect(start.stderr()).toContain(`bermd: ${said}`);
      await removeDir(start.stateDir);
    }
    const missing = await launchDaemon({ args: ['--access', path.join(dir, 'absent.json')] });
    expect(await exited(missing.process)).toBe(2);
    expect(missing.stderr()).toContain(`bermd: --access ${path.join(dir, 'absent.json')}: ENOENT`);
    await removeDir(missing.stateDir);
  });
});
