// berm login, the logins it stores and the commands that use them, with real parts: a real bermd started
// as an OAuth resource server (--oauth-issuer, --resource) behind a loopback reverse proxy that is its
// public address (helpers/login.ts's Front), the test authorization server (oidc-provider, test/helpers/
// oidc.ts) with dynamic registration, `berm login` run as a child process whose printed URL the test follows
// as a browser would (over HTTP, cookies kept), and the other commands run as child processes too. Each
// test keeps its logins in a config directory of its own, so any test passes run alone.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, type RunningDaemon, startDaemon } from '../../bermd/test/daemon.js';
import { startIssuer, type TestIssuer } from '../../../test/helpers/oidc.js';
import { MINIMAL_WAT, runCli } from './helpers/cli.js';
import { approve, Front, LoginRun, storedLogins, visit } from './helpers/login.js';
import { recipe, StderrLines } from './helpers/stdio.js';

/** Logins start processes and walk an authorization server's redirects: more than a call takes on a busy machine. */
const SLOW = 90_000;

let front: Front;
let as: TestIssuer;
let bermd: RunningDaemon;
let resource: string;
const homes: string[] = [];

beforeAll(async () => {
  front = await Front.start();
  resource = `${front.url}/mcp`;
  as = await startIssuer({ resources: [resource], registration: true, users: ['alice'] });
  bermd = await startDaemon({ args: ['--oauth-issuer', as.issuer, '--resource', resource] });
  front.target = bermd.url;
}, SLOW);

afterAll(async () => {
  await bermd?.stop();
  if (bermd !== undefined) await removeDir(bermd.stateDir);
  await as?.close();
  await front?.close();
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

/** A config directory of the test's own (XDG_CONFIG_HOME). */
async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berm-login-'));
  homes.push(dir);
  return dir;
}

/** `berm login` against the front address, approved in the "browser" as alice; resolves with how it ended. */
async function login(
  config: string,
  args: string[] = [],
): Promise<{ code: number | string; stdout: string; stderr: string; page: string }> {
  const run = LoginRun.start(['--url', front.url, ...args], { XDG_CONFIG_HOME: config });
  const back = await approve(await run.authorizationUrl(), 'alice');
  const page = await visit(back);
  return { ...(await run.result()), page: page.text };
}

function berm(args: string[], config: string, env: Record<string, string | undefined> = {}) {
  return runCli(args, { bin: 'berm', env: { XDG_CONFIG_HOME: config, BERM_URL: front.url, ...env } });
}

describe('berm login', { timeout: SLOW }, () => {
  it('finds the authorization server from bermd, registers berm there, and stores tokens that berm ls then uses', async () => {
    const config = await home();
    const registrations = as.requests('/reg');
    const done = await login(config);
    expect(done.code).toBe(0);
    expect(done.page).toContain('logged in');
    expect(done.stdout).toContain(`logged in to bermd at ${front.url} through ${as.issuer}`);

    const { logins, clients } = await storedLogins(config);
    const stored = logins[front.url]!;
    expect(stored).toMatchObject({ issuer: as.issuer, resource, client_id: clients[as.issuer]!.client_id });
    expect(stored.scope!.split(' ').sort()).toEqual(['berm:call', 'berm:deploy', 'berm:force', 'berm:read']);
    expect(stored.refresh_token).toBeTruthy();
    expect(Date.parse(stored.expires_at!)).toBeGreaterThan(Date.now());
    expect(as.requests('/reg')).toBe(registrations + 1);
    // The tokens are secrets: neither is printed.
    for (const secret of [stored.access_token!, stored.refresh_token!]) expect(done.stdout + done.stderr + done.page).not.toContain(secret);

    // The user's alone: the file 0600, its directory 0700.
    expect((await stat(join(config, 'berm', 'logins.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(config, 'berm'))).mode & 0o777).toBe(0o700);

    const ls = await berm(['ls', '--json'], config);
    expect(ls.stderr).toBe('');
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual([]);

    // The client registered is remembered: the next login there registers none.
    const again = await login(config);
    expect(again.code).toBe(0);
    expect(as.requests('/reg')).toBe(registrations + 1);
    expect((await storedLogins(config)).logins[front.url]!.client_id).toBe(stored.client_id);
  });

  it('refreshes an expired access token with the refresh token, and stores the new ones', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    const file = join(config, 'berm', 'logins.json');
    const before = await storedLogins(config);
    before.logins[front.url]!.expires_at = new Date(Date.now() - 60_000).toISOString();
    await writeFile(file, JSON.stringify({ version: 1, ...before }), { mode: 0o600 });

    const ls = await berm(['ls'], config);
    expect(ls.stderr).toBe('');
    expect(ls.code).toBe(0);
    const after = (await storedLogins(config)).logins[front.url]!;
    const old = before.logins[front.url]!;
    expect(after.access_token).not.toBe(old.access_token);
    // The server rotates refresh tokens: the new one is kept, the spent one forgotten.
    expect(after.refresh_token).not.toBe(old.refresh_token);
    expect(Date.parse(after.expires_at!)).toBeGreaterThan(Date.now());
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('refreshes once when two commands find the token expired at once: the second takes the tokens of the first', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    const held = await storedLogins(config);
    held.logins[front.url]!.expires_at = new Date(Date.now() - 60_000).toISOString();
    await writeFile(join(config, 'berm', 'logins.json'), JSON.stringify({ version: 1, ...held }), { mode: 0o600 });
    const refreshes = as.requests('/token');

    // The server rotates refresh tokens and takes a second use of one as theft: both succeed only if it is spent once.
    const both = await Promise.all([berm(['ls'], config), berm(['ls'], config)]);
    for (const ls of both) {
      expect(ls.stderr).toBe('');
      expect(ls.code).toBe(0);
    }
    expect(as.requests('/token')).toBe(refreshes + 1);
  });

  it('says to log in again when the stored login can no longer be refreshed', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    const held = await storedLogins(config);
    Object.assign(held.logins[front.url]!, {
      expires_at: new Date(Date.now() - 60_000).toISOString(),
      refresh_token: 'not-a-refresh-token',
    });
    await writeFile(join(config, 'berm', 'logins.json'), JSON.stringify({ version: 1, ...held }), { mode: 0o600 });

    const ls = await berm(['ls', '--json'], config);
    expect(ls.code).toBe(2);
    const error = JSON.parse(ls.stdout).error;
    expect(error.code).toBe('login-expired');
    expect(error.message).toContain(`run berm login --url ${front.url}`);
  });

  it('logs out: the login is removed, and bermd then asks for one', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    const out = await berm(['logout'], config);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`logged out of bermd at ${front.url}`);
    expect((await storedLogins(config)).logins[front.url]).toBeUndefined();

    const ls = await berm(['ls'], config);
    expect(ls.code).toBe(2);
    expect(ls.stderr).toContain(`asks for a token`);
    expect(ls.stderr).toContain(`run berm login --url ${front.url}`);

    const twice = await berm(['logout'], config);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('no login stored');
  });

  it('sends --token (or BERM_TOKEN) rather than the stored login', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    for (const given of [
      { args: ['--token', 'not-a-token'], env: {} },
      { args: [], env: { BERM_TOKEN: 'not-a-token' } },
    ]) {
      const ls = await berm(['ls', ...given.args], config, given.env);
      expect(ls.code).toBe(2);
      expect(ls.stderr).toContain('refused the token given with --token or BERM_TOKEN');
    }
  });

  it('names the scope a 403 lacks, and how to log in with it', async () => {
    const config = await home();
    expect((await login(config, ['--scope', 'berm:read'])).code).toBe(0);
    expect((await storedLogins(config)).logins[front.url]!.scope).toBe('berm:read');
    expect((await berm(['ls'], config)).code).toBe(0);

    const dir = await home();
    const image = join(dir, 'minimal.wat');
    await writeFile(image, MINIMAL_WAT);
    const deploy = await runCli(['deploy', 'minimal', image], { env: { XDG_CONFIG_HOME: config, BERM_URL: front.url } });
    expect(deploy.code).toBe(2);
    expect(deploy.stderr).toContain('does not hold the scope berm:deploy');
    expect(deploy.stderr).toContain('the login stored for it lacks berm:deploy');
    expect(deploy.stderr).toContain(`run berm login --url ${front.url} --scope berm:read --scope berm:deploy`);
  });

  it('refuses a redirect back whose state is not the one it sent, and stores nothing', async () => {
    const config = await home();
    const run = LoginRun.start(['--url', front.url], { XDG_CONFIG_HOME: config });
    const back = await approve(await run.authorizationUrl(), 'alice');
    back.searchParams.set('state', 'forged');
    const page = await visit(back);
    expect(page.status).toBe(400);
    const done = await run.result();
    expect(done.code).toBe(1);
    expect(done.stderr).toContain('state that is not the one this login sent');
    expect((await storedLogins(config)).logins[front.url]).toBeUndefined();
  });

  it('logs in as the client named by --client-id, registering none', async () => {
    const registered = await fetch(`${as.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const config = await home();
    const registrations = as.requests('/reg');
    expect((await login(config, ['--client-id', client_id])).code).toBe(0);
    expect(as.requests('/reg')).toBe(registrations);
    expect((await storedLogins(config)).logins[front.url]!.client_id).toBe(client_id);
    expect((await berm(['ls'], config)).code).toBe(0);
  });

  it('says when there is nothing to log in to: a bermd that asks for no token, or takes only its own', async () => {
    const config = await home();
    const open = await startDaemon();
    const dir = await home();
    await writeFile(join(dir, 'token'), 'sesame');
    await chmod(join(dir, 'token'), 0o600);
    const guarded = await startDaemon({ args: ['--token-file', join(dir, 'token')] });
    try {
      let r = await runCli(['login', '--url', open.url, '--json'], { bin: 'berm', env: { XDG_CONFIG_HOME: config } });
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({
        code: 'no-authorization-server',
        message: expect.stringContaining('asks for no token'),
      });
      r = await runCli(['login', '--url', guarded.url], { bin: 'berm', env: { XDG_CONFIG_HOME: config } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('names no authorization server: give yours with --token or BERM_TOKEN');
    } finally {
      for (const d of [open, guarded]) {
        await d.stop();
        await removeDir(d.stateDir);
      }
    }
  });
});

describe('berm mcp with a stored login', { timeout: SLOW }, () => {
  it('sends the stored login, and when bermd refuses it mid-way, refreshes it and keeps the session', async () => {
    const config = await home();
    expect((await login(config)).code).toBe(0);
    const first = (await storedLogins(config)).logins[front.url]!.access_token!;

    const transport = new StdioClientTransport({ ...recipe(front.url, { XDG_CONFIG_HOME: config }), stderr: 'pipe' });
    const stderr = new StderrLines();
    transport.stderr!.on('data', (c: Buffer) => stderr.feed(c));
    const client = new Client({ name: 'login', version: '0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools).toEqual([]);
      const session = front.sessions.at(-1);
      expect(session).toBeTruthy();

      front.refuse(first);
      expect((await client.listTools()).tools).toEqual([]);
      expect(front.refusals).toBeGreaterThan(0);
      const second = (await storedLogins(config)).logins[front.url]!.access_token!;
      expect(second).not.toBe(first);
      // The same session all along: the refreshed token went out on it.
      expect(front.sessions.at(-1)).toBe(session);
      expect(stderr.lines.join('\n')).not.toContain('opening a new one');
    } finally {
      await client.close();
    }
  });

  it('a login without berm:call is answered with the scope it lacks and how to ask for it', async () => {
    const config = await home();
    expect((await login(config, ['--scope', 'berm:read'])).code).toBe(0);
    const client = new Client({ name: 'reader', version: '0' });
    const refused = await client
      .connect(new StdioClientTransport({ ...recipe(front.url, { XDG_CONFIG_HOME: config }), stderr: 'ignore' }))
      .catch((e: unknown) => e);
    expect((refused as Error).message).toContain('the login stored for it lacks berm:call');
    expect((refused as Error).message).toContain(`run berm login --url ${front.url} --scope berm:read --scope berm:call`);
    await client.close();
  });

  it('without a login, answers that bermd asks for one and how to log in', async () => {
    const config = await home();
    const client = new Client({ name: 'no-login', version: '0' });
    const refused = await client
      .connect(new StdioClientTransport({ ...recipe(front.url, { XDG_CONFIG_HOME: config }), stderr: 'ignore' }))
      .catch((e: unknown) => e);
    expect((refused as Error).message).toContain(`asks for a token (401): run berm login --url ${front.url}`);
    await client.close();
  });
});

describe('the stored file', { timeout: SLOW }, () => {
  it('is refused, with where it is and what to do, when it is not a logins file', async () => {
    const config = await home();
    await mkdir(join(config, 'berm'), { recursive: true });
    await writeFile(join(config, 'berm', 'logins.json'), '{"not": "logins"}');
    const ls = await berm(['ls'], config);
    expect(ls.code).toBe(2);
    expect(ls.stderr).toContain(join(config, 'berm', 'logins.json'));
    expect(ls.stderr).toContain('remove it, then run berm login again');
    expect(await readFile(join(config, 'berm', 'logins.json'), 'utf8')).toBe('{"not": "logins"}');
  });
});
