// Calls made for a principal, end to end: real bermd processes with an --access file and a --secrets
// file holding secrets for principals, MCP clients of both generations holding each principal's token, a
// loopback server standing in for the remote host and recording the headers it receives. A secret given
// per principal goes out as the caller's own value, a principal without one is refused before anything
// is sent, and a berm.call chain reaches only what its caller may call. Whatever a test did, no value is
// in any answer or in the log.
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpImage } from '../../../test/helpers/guest.js';
import { tokenSha256 } from '../dist/auth/index.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { type AnyToolResult, connect, connectModern, deploy, valueOf } from './mcp-client.js';
import { RemoteHost, resolvedTo } from './remote.js';

const ALICE_GITHUB = 'ghp-alice-5d0c-own-credential';
const BOB_GITHUB = 'ghp-bob-e81a-own-credential';
const BOB_ROTATED = 'ghp-bob-0f37-rotated-credential';
const DEPLOY_KEY = 'deploy-key-a4b9-for-ci-and-alice';
const VALUES = [ALICE_GITHUB, BOB_GITHUB, BOB_ROTATED, DEPLOY_KEY];

const SECRETS = {
  github: { per_principal: { alice: ALICE_GITHUB, bob: BOB_GITHUB } },
  deploy: { value: DEPLOY_KEY, principals: ['ci', 'alice'] },
};

/** Each principal's scopes; its token is `token-NAME` with some length to it. */
const PRINCIPALS: Record<string, string[]> = {
  admin: ['berm:read', 'berm:deploy'],
  alice: ['berm:call'],
  bob: ['berm:call'],
  carol: ['berm:call'],
  ci: ['berm:call:h'],
  dana: ['berm:call:a'],
  erin: ['berm:call:a', 'berm:call:b'],
};
const tokenOf = (name: string): string => `berm_test-token-of-${name}-0123456789abcdef`;
const bearer = (name: string): Record<string, string> => ({ authorization: `Bearer ${tokenOf(name)}` });

type Envelope =
  | { ok: { status: number; body: string; headers: Record<string, string | string[]> } }
  | { refused: string }
  | { failed: string };

/** A caller of one generation: calls a tool and answers the tool result. */
type Call = (name: string, args: Record<string, unknown>) => Promise<AnyToolResult & { _meta?: Record<string, unknown> }>;

interface World {
  remote: RemoteHost;
  api: string;
  dir: string;
  secretsFile: string;
}

async function world(): Promise<World> {
  const remote = await RemoteHost.start();
  remote.route('/echo', (_req, res, seen) => {
    // Echoes the authorization back: a secret sent must come back to the guest as its name only.
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ authorization: seen.headers.authorization ?? null }));
  });
  const dir = await tempDir('bermd-callers-');
  const secretsFile = path.join(dir, 'secrets.json');
  await writeFile(secretsFile, JSON.stringify(SECRETS), { mode: 0o600 });
  const access = Object.entries(PRINCIPALS).map(([name, scopes]) => ({ name, token_sha256: tokenSha256(tokenOf(name)), scopes }));
  await writeFile(path.join(dir, 'access.json'), JSON.stringify(access), { mode: 0o600 });
  return { remote, api: `api.example.com:${remote.port}`, dir, secretsFile };
}

async function bermd(w: World, extra: string[] = []): Promise<RunningDaemon> {
  const d = await startDaemon({
    args: [
      '--serve',
      'berm.http.fetch',
      ...resolvedTo(w.remote, 'api.example.com'),
      '--secrets',
      w.secretsFile,
      '--access',
      path.join(w.dir, 'access.json'),
      // Everything bermd logs is written, so the check that no value is in the log covers it all.
      '--log-level',
      'trace',
      ...extra,
    ],
  });
  const admin = { ...bearer('admin'), 'content-type': 'application/wasm' };
  await deploy(d.url, 'h', (await httpImage({ fetch: [w.api], secrets: ['github', 'deploy'] })).bytes, admin);
  await deploy(d.url, 'a', (await httpImage({ programs: ['b'] })).bytes, admin);
  await deploy(d.url, 'b', (await httpImage({ fetch: [w.api], secrets: ['github'] })).bytes, admin);
  return d;
}

/** Every text bermd answered with, since the last check that no value is in any. */
const answered: string[] = [];

/** A caller for `principal` in each generation, closed when the test's daemon stops. */
class Callers {
  private readonly closers: Array<() => Promise<void>> = [];
  constructor(private readonly url: string) {}

  async legacy(principal: string): Promise<Call> {
    const c = await connect(this.url, bearer(principal));
    this.closers.push(() => c.close());
    return async (name, args) => {
      const result = (await c.client.callTool({ name, arguments: args })) as AnyToolResult;
      answered.push(JSON.stringify(result));
      return result;
    };
  }

  async modern(principal: string): Promise<Call> {
    const c = await connectModern(this.url, bearer(principal));
    this.closers.push(() => c.close());
    return async (name, args) => {
      const result = (await c.client.callTool({ name, arguments: args })) as AnyToolResult;
      answered.push(JSON.stringify(result));
      return result;
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.splice(0).map((close) => close()));
  }
}

function ok(envelope: Envelope): { status: number; body: string } {
  if (!('ok' in envelope)) throw new Error(`expected an answer, got ${JSON.stringify(envelope)}`);
  return envelope.ok;
}

/** The answer of a fetch made one `berm.call` down: the call's envelope holds the fetch's. */
function nestedOk(envelope: Envelope): { status: number; body: string } {
  return ok(ok(envelope) as unknown as Envelope);
}

function refusal(envelope: Envelope): string {
  if (!('refused' in envelope)) throw new Error(`expected a refusal, got ${JSON.stringify(envelope)}`);
  return envelope.refused;
}

const fetchWith = (api: string, authorization: string) => ({ url: `http://${api}/echo`, headers: { authorization } });

describe.each([
  ['the fast path', []],
  ["the MCP SDK's path", ['--mcp-fast-path', 'false']],
])('secrets per caller and berm.call for its caller, through %s', (_path, flags) => {
  let w: World;
  let d: RunningDaemon;
  let callers: Callers;

  beforeAll(async () => {
    w = await world();
    d = await bermd(w, flags);
    callers = new Callers(d.url);
  });

  afterAll(async () => {
    await callers?.close();
    await d?.stop();
    await w?.remote.close();
    if (d) await removeDir(d.stateDir);
    if (w) await removeDir(w.dir);
  });

  afterEach(() => {
    for (const text of [...answered.splice(0), d.stderr()]) for (const value of VALUES) expect(text).not.toContain(value);
  });

  /** The authorization the remote host received for `principal`'s fetch sending `header`, in both generations. */
  async function sentFor(principal: string, header: string): Promise<unknown[]> {
    const sent: unknown[] = [];
    for (const call of [await callers.legacy(principal), await callers.modern(principal)]) {
      const before = w.remote.seen.length;
      const answer = ok(valueOf(await call('h.fetch', fetchWith(w.api, header))) as Envelope);
      // The server's echo comes back to the guest with the value replaced by the secret's name.
      expect(JSON.parse(answer.body)).toEqual({ authorization: header });
      sent.push(w.remote.seen[before]?.headers.authorization);
    }
    return sent;
  }

  /**
   * What `principal` is answered when its fetch sends `header`, in both generations, having checked that
   * nothing reached the remote host: a request that must be sent arrives as the next one after.
   */
  async function refusedFor(principal: string, tool: string, args: Record<string, unknown>): Promise<string[]> {
    const marker = await callers.legacy('alice');
    const said: string[] = [];
    for (const call of [await callers.legacy(principal), await callers.modern(principal)]) {
      const before = w.remote.seen.length;
      said.push(refusal(valueOf(await call(tool, args)) as Envelope));
      const url = `/echo?after=${before}`;
      ok(valueOf(await marker('h.fetch', { url: `http://${w.api}${url}` })) as Envelope);
      expect(w.remote.seen.slice(before).map((s) => s.url)).toEqual([url]);
    }
    return said;
  }

  it('sends each of two principals its own value of a per-principal secret', async () => {
    expect(await sentFor('alice', 'Bearer {secret:github}')).toEqual([`Bearer ${ALICE_GITHUB}`, `Bearer ${ALICE_GITHUB}`]);
    expect(await sentFor('bob', 'token {secret:github}')).toEqual([`token ${BOB_GITHUB}`, `token ${BOB_GITHUB}`]);
  });

  it('refuses a principal without a value before anything is sent, naming the secret and the principal, and logs it with the principal', async () => {
    const said = await refusedFor('carol', 'h.fetch', fetchWith(w.api, 'Bearer {secret:github}'));
    const expected = 'secret github is not provided for principal carol: its operator gives it to named principals only (see --secrets)';
    expect(said).toEqual([expected, expected]);
    const logged = await d.waitForLog((e) => e.msg === 'refused an http request' && e.principal === 'carol');
    expect(logged).toMatchObject({ harness: 'h', entry: 'h', syscall: 'berm.http.fetch', reason: expected });
  });

  it('gives a secret limited to principals to those it lists only', async () => {
    expect(await sentFor('ci', '{secret:deploy}')).toEqual([DEPLOY_KEY, DEPLOY_KEY]);
    expect(await sentFor('alice', '{secret:deploy}')).toEqual([DEPLOY_KEY, DEPLOY_KEY]);
    const expected = 'secret deploy is not provided for principal bob: its operator gives it to named principals only (see --secrets)';
    expect(await refusedFor('bob', 'h.fetch', fetchWith(w.api, '{secret:deploy}'))).toEqual([expected, expected]);
  });

  it('refuses berm.call from a to b for a caller holding only berm:call:a, and sends nothing', async () => {
    const nested = { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo` } };
    const expected = 'the caller (dana) does not hold berm:call:b (nor berm:call): b.fetch was not called';
    expect(await refusedFor('dana', 'a.call', nested)).toEqual([expected, expected]);
    // Nor may dana call b directly: /mcp refuses it 403 naming berm:call:b (mcp-scopes.test.ts), and nothing runs.
    const marker = await callers.legacy('alice');
    for (const call of [await callers.legacy('dana'), await callers.modern('dana')]) {
      const before = w.remote.seen.length;
      const direct = await call('b.fetch', { url: `http://${w.api}/echo` }).catch((e: unknown) => e);
      // The 1.x client quotes the body in its error, the v2 client gives the challenge's scopes.
      const said = direct instanceof Error ? `${direct.message} ${(direct as { requiredScope?: string }).requiredScope}` : 'answered';
      expect(said).toContain('berm:call:b');
      const url = `/echo?after=${before}`;
      ok(valueOf(await marker('h.fetch', { url: `http://${w.api}${url}` })) as Envelope);
      expect(w.remote.seen.slice(before).map((s) => s.url)).toEqual([url]);
    }
  });

  it('lets berm.call from a to b through for berm:call:a with berm:call:b, and for berm:call, with the chain caller’s own secret', async () => {
    for (const call of [await callers.legacy('erin'), await callers.modern('erin')]) {
      const answer = valueOf(await call('a.call', { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo` } })) as Envelope;
      expect(nestedOk(answer).status).toBe(200);
    }
    for (const call of [await callers.legacy('alice'), await callers.modern('alice')]) {
      const before = w.remote.seen.length;
      const args = { program: 'b', tool: 'fetch', args: fetchWith(w.api, 'Bearer {secret:github}') };
      expect(nestedOk(valueOf(await call('a.call', args)) as Envelope).status).toBe(200);
      expect(w.remote.seen[before]?.headers.authorization).toBe(`Bearer ${ALICE_GITHUB}`);
    }
  });
});

describe('SIGHUP with secrets for principals', () => {
  let w: World;
  let d: RunningDaemon;
  let callers: Callers;

  beforeAll(async () => {
    w = await world();
    d = await bermd(w);
    callers = new Callers(d.url);
  });

  afterAll(async () => {
    await callers?.close();
    await d?.stop();
    await w?.remote.close();
    if (d) await removeDir(d.stateDir);
    if (w) await removeDir(w.dir);
  });

  async function sent(principal: string, header: string): Promise<unknown> {
    const call = await callers.legacy(principal);
    const before = w.remote.seen.length;
    const answer = valueOf(await call('h.fetch', fetchWith(w.api, header))) as Envelope;
    return 'ok' in answer ? w.remote.seen[before]?.headers.authorization : answer;
  }

  it('reads the new forms again, names what was added, removed and changed (who may use one included), never a value', async () => {
    expect(await sent('bob', '{secret:github}')).toBe(BOB_GITHUB);
    expect(await sent('alice', '{secret:deploy}')).toBe(DEPLOY_KEY);
    await writeFile(
      w.secretsFile,
      JSON.stringify({
        github: { per_principal: { alice: ALICE_GITHUB, bob: BOB_ROTATED } },
        deploy: { value: DEPLOY_KEY, principals: ['ci'] },
        fresh: { per_principal: { carol: 'fresh-value-for-carol' } },
      }),
    );
    await chmod(w.secretsFile, 0o600);
    d.process.kill('SIGHUP');
    const logged = await d.waitForLog((e) => e.signal === 'SIGHUP' && e.msg === 'SIGHUP: secrets read again');
    expect(logged).toMatchObject({ added: ['fresh'], removed: [], changed: ['deploy', 'github'], held: 3 });
    expect(await sent('bob', '{secret:github}')).toBe(BOB_ROTATED);
    expect(await sent('alice', '{secret:github}')).toBe(ALICE_GITHUB);
    expect(await sent('alice', '{secret:deploy}')).toEqual({
      refused: 'secret deploy is not provided for principal alice: its operator gives it to named principals only (see --secrets)',
    });
    for (const value of [...VALUES, 'fresh-value-for-carol']) expect(d.stderr()).not.toContain(value);
  });
});
