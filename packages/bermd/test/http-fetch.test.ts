// berm.http.fetch and berm.http.proxy end to end: real bermd processes, loopback servers standing in for
// remote hosts (declared names pointed at them with --resolve), a forward proxy, and the MCP SDK client
// as the caller. "Nothing was sent" is checked by the remote host's own record of what reached it,
// closed off by a request that must arrive right after.
import { spawn } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BermClient } from '@berm/client';
import { basicImage, httpImage } from '../../../test/helpers/guest.js';
import { BERMD_BIN, exited, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, deploy, put, textOf, valueOf, type McpConnection } from './mcp-client.js';
import { ForwardProxy, RemoteHost, resolvedTo, type SeenRequest } from './remote.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

const SECRET = 'tok-8c1f0e-SHHH-the-example-value';
const SCOPED = 'sc0ped-77b2-only-for-front';
/** A value an error message quotes by coincidence: the address a connection is refused at. */
const UPSTREAM = '127.0.0.2';
const MAX_BODY = 1024;

type Envelope = { ok: Answer } | { refused: string } | { failed: string };
interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  body_base64?: true;
  truncated?: true;
}

/** Every text bermd answered with, over the control API and MCP, since the last check that no secret value is in any. */
const answered: string[] = [];

async function callTool(c: McpConnection, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await c.client.callTool({ name, arguments: args })) as CallToolResult;
  answered.push(JSON.stringify(result));
  return result;
}

/** The host's envelope, as the relaying guest answered it. */
async function request(c: McpConnection, tool: string, req: Record<string, unknown>): Promise<Envelope> {
  return valueOf(await callTool(c, tool, req)) as Envelope;
}

function ok(envelope: Envelope): Answer {
  if (!('ok' in envelope)) throw new Error(`expected an answer, got ${JSON.stringify(envelope)}`);
  return envelope.ok;
}

function refusal(envelope: Envelope): string {
  if (!('refused' in envelope)) throw new Error(`expected a refusal, got ${JSON.stringify(envelope)}`);
  return envelope.refused;
}

async function getText(url: string): Promise<string> {
  const text = await (await fetch(url)).text();
  answered.push(text);
  return text;
}

describe('berm.http.fetch', () => {
  let remote: RemoteHost;
  let d: RunningDaemon;
  let c: McpConnection;
  let client: BermClient;
  let secretsDir: string;
  let api: string;
  let other: string;

  /**
   * Closes off a check that nothing reached the remote host: one request that must be sent arrives as
   * the next one after `before`, so nothing refused earlier can still be on its way.
   */
  async function nothingSentSince(before: number): Promise<void> {
    const marker = `/echo?marker=${before}`;
    ok(await request(c, 'h.fetch', { url: `http://${api}${marker}` }));
    expect(remote.seen.slice(before).map((s) => s.url)).toEqual([marker]);
  }

  beforeAll(async () => {
    remote = await RemoteHost.start();
    api = `api.example.com:${remote.port}`;
    other = `other.example.com:${remote.port}`;
    remote
      .route('/echo', (_req, res, seen) => {
        // Echoes the authorization back, as a header and in the body: a secret sent must not come back to the guest.
        const auth = seen.headers.authorization ?? null;
        if (auth !== null) res.setHeader('x-authorization', auth);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: seen.method, url: seen.url, host: seen.headers.host, authorization: auth, body: seen.body }));
      })
      .route('/redirect', (_req, res) => {
        res.writeHead(302, { location: `http://elsewhere.example.net:${remote.port}/echo?followed` }).end();
      })
      .route('/big', (_req, res) => res.end('a'.repeat(MAX_BODY * 3)))
      .route('/binary', (_req, res) => res.end(Buffer.from([0xff, 0x00, 0x80, 0x41])))
      .hold('/slow');

    secretsDir = await tempDir('bermd-secrets-');
    const secretsFile = path.join(secretsDir, 'secrets.json');
    await writeFile(secretsFile, JSON.stringify({ example: SECRET, scoped: { value: SCOPED, harnesses: ['front'] }, upstream: UPSTREAM }), {
      mode: 0o600,
    });

    d = await startDaemon({
      args: [
        '--serve',
        'berm.http.fetch',
        ...resolvedTo(remote, 'api.example.com', 'other.example.com', 'elsewhere.example.net'),
        // Nothing listens there: a request to it fails with a message naming the address.
        '--resolve',
        `down.example.com:${remote.port}:${UPSTREAM}`,
        '--secrets',
        secretsFile,
        '--http-max-body',
        String(MAX_BODY),
        // Everything bermd logs is written, so the check that no secret value is in the log covers it all.
        '--log-level',
        'trace',
        // Far beyond any test's time: only a harness's own limit, or the test, ends a held request.
        '--call-timeout',
        '2m',
        // Calls that wait on the network hold their workers: five of one harness's may run at once here.
        '--max-concurrency',
        '5',
      ],
    });
    client = new BermClient(d.url);
    await deploy(d.url, 'h', (await httpImage({ fetch: [api], secrets: ['example', 'absent'] })).bytes);
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    c = await connect(d.url);
  });

  afterAll(async () => {
    await c?.close();
    await client?.close();
    await d?.stop();
    await remote?.close();
    if (d) await removeDir(d.stateDir);
    if (secretsDir) await removeDir(secretsDir);
  });

  // Whatever a test did, no answer it got and no line of the log holds a secret value.
  afterEach(() => {
    for (const text of [...answered.splice(0), d.stderr()]) {
      for (const value of [SECRET, SCOPED, UPSTREAM]) expect(text).not.toContain(value);
    }
  });

  it("reaches a declared host with the guest's method, headers and body, and answers status, headers and body", async () => {
    const before = remote.seen.length;
    const answer = ok(
      await request(c, 'h.fetch', {
        method: 'POST',
        url: `http://${api}/echo?q=1`,
        headers: { 'X-One': 'a', 'content-type': 'text/plain' },
        body: 'héllo',
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual({ method: 'POST', url: '/echo?q=1', host: api, authorization: null, body: 'héllo' });
    const seen = remote.seen[before]!;
    expect(seen.headers['x-one']).toBe('a');

    // Bytes go as base64; a name matches whatever its case.
    const bytes = ok(
      await request(c, 'h.fetch', {
        method: 'PUT',
        url: `http://API.Example.COM:${remote.port}/echo`,
        body: Buffer.from('bytes\u0000').toString('base64'),
        body_base64: true,
      }),
    );
    expect(JSON.parse(bytes.body).body).toBe('bytes\u0000');
    expect(remote.seen.length).toBe(before + 2);
  });

  it('refuses, before anything is sent, a host the image does not declare, another port, another scheme, credentials in the URL and a Host header', async () => {
    const before = remote.seen.length;
    // other.example.com reaches the same server through --resolve: only the refusal keeps the request from it.
    expect(refusal(await request(c, 'h.fetch', { url: `http://${other}/echo` }))).toBe(
      `http://${other} is not declared by h under berm.http.fetch (declared: ${api})`,
    );
    // A name declared with a port covers that port only.
    expect(refusal(await request(c, 'h.fetch', { url: 'http://api.example.com/echo' }))).toMatch(
      /^http:\/\/api\.example\.com is not declared by h/,
    );
    expect(refusal(await request(c, 'h.fetch', { url: `ftp://${api}/` }))).toMatch(/only http: and https: URLs are sent/);
    expect(refusal(await request(c, 'h.fetch', { url: `http://u:p@${api}/echo` }))).toMatch(/carries credentials/);
    expect(refusal(await request(c, 'h.fetch', { url: `http://${api}/echo`, headers: { host: other } }))).toBe(
      "header host is the host's to set",
    );
    expect(refusal(await request(c, 'h.fetch', { url: 42 }))).toMatch(/^url must be a string/);
    await nothingSentSince(before);
  });

  it('substitutes a declared secret for the server; the guest, the answers and the log only ever see its name', async () => {
    const before = remote.seen.length;
    const answer = ok(
      await request(c, 'h.fetch', {
        url: `http://${api}/echo`,
        headers: { authorization: 'Bearer {secret:example}', 'x-note': 'plain {braces}' },
      }),
    );
    const seen = remote.seen[before]!;
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen.headers['x-note']).toBe('plain {braces}');
    // The server echoed the value back in a header and in the body: the guest gets the reference instead.
    expect(answer.headers['x-authorization']).toBe('Bearer {secret:example}');
    expect(JSON.parse(answer.body).authorization).toBe('Bearer {secret:example}');

    const list = await getText(`${d.url}/harnesses`);
    const detail = await getText(`${d.url}/harnesses/h`);
    expect(JSON.parse(detail).grants).toEqual({ syscalls: { 'berm.http.fetch': [api] }, secrets: ['example', 'absent'] });
    for (const text of [list, detail, d.stderr()]) expect(text).not.toContain(SECRET);
    // The log did record the request (at debug), so the check that it holds no value looked at something.
    await d.waitForLog((e) => e.msg === 'http request' && e.harness === 'h' && e.status === 200);
  });

  it("keeps a secret out of a failed request's error message: the guest, the answer and the log see its name", async () => {
    // No error undici raises today quotes a header, but any text an error does quote (an address, a
    // name, a server's words) can be a value: here the operator's secret is the address the connection
    // is refused at.
    await deploy(d.url, 'down', (await httpImage({ fetch: [`down.example.com:${remote.port}`], secrets: ['upstream'] })).bytes);
    const envelope = await request(c, 'down.fetch', {
      url: `http://down.example.com:${remote.port}/`,
      headers: { 'x-upstream': '{secret:upstream}' },
    });
    if (!('failed' in envelope)) throw new Error(`expected a failure, got ${JSON.stringify(envelope)}`);
    expect(envelope.failed).toMatch(
      new RegExp(`^berm\\.http\\.fetch GET down\\.example\\.com:${remote.port}: .*ECONNREFUSED \\[secret:upstream\\]:${remote.port}`),
    );
    const logged = await d.waitForLog((e) => e.msg === 'http request failed' && e.harness === 'down');
    expect(logged).toMatchObject({ code: 'ECONNREFUSED', host: `down.example.com:${remote.port}` });
  });

  it('refuses a secret the image does not declare, and one the operator does not provide, before sending', async () => {
    const before = remote.seen.length;
    expect(refusal(await request(c, 'h.fetch', { url: `http://${api}/echo`, headers: { authorization: '{secret:scoped}' } }))).toBe(
      'secret "scoped" is not declared in deps.secrets of h',
    );
    expect(refusal(await request(c, 'h.fetch', { url: `http://${api}/echo`, headers: { 'x-key': '{secret:absent}' } }))).toBe(
      "secret absent is not provided by this host's operator",
    );
    await nothingSentSince(before);
  });

  it('answers a redirect to the guest and does not follow it', async () => {
    const before = remote.seen.length;
    const answer = ok(await request(c, 'h.fetch', { url: `http://${api}/redirect` }));
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe(`http://elsewhere.example.net:${remote.port}/echo?followed`);
    // elsewhere.example.net resolves to the same server, so a followed redirect would show up here.
    expect(remote.seen[before]!.url).toBe('/redirect');
    await nothingSentSince(before + 1);
  });

  it('cuts a body longer than --http-max-body and says so; hands bytes that are not text as base64', async () => {
    const big = ok(await request(c, 'h.fetch', { url: `http://${api}/big` }));
    expect(big).toMatchObject({ status: 200, truncated: true });
    expect(big.body).toBe('a'.repeat(MAX_BODY));
    const small = ok(await request(c, 'h.fetch', { url: `http://${api}/echo` }));
    expect(small.truncated).toBeUndefined();
    const binary = ok(await request(c, 'h.fetch', { url: `http://${api}/binary` }));
    expect(binary.body_base64).toBe(true);
    expect([...Buffer.from(binary.body, 'base64')]).toEqual([0xff, 0x00, 0x80, 0x41]);
  });

  it('refuses what a narrowed grant leaves out: a declared host, a declared secret', async () => {
    const image = await httpImage({ fetch: [api, other], secrets: ['example'] });
    await client.deploy('narrow', image.bytes, { grants: [`berm.http.fetch=${api}`] });
    const detail = JSON.parse(await getText(`${d.url}/harnesses/narrow`));
    expect(detail.grants).toEqual({ syscalls: { 'berm.http.fetch': [api] }, secrets: [] });
    expect(detail.bindings).toEqual({ grants: { syscalls: { 'berm.http.fetch': [api] }, secrets: [] } });

    const before = remote.seen.length;
    expect(refusal(await request(c, 'narrow.fetch', { url: `http://${other}/echo` }))).toBe(
      `http://${other} is declared by narrow under berm.http.fetch, but its operator has not granted it (granted: ${api})`,
    );
    expect(refusal(await request(c, 'narrow.fetch', { url: `http://${api}/echo`, headers: { authorization: '{secret:example}' } }))).toBe(
      'secret example is declared by narrow, but its operator has not granted it',
    );
    await nothingSentSince(before);
    ok(await request(c, 'narrow.fetch', { url: `http://${api}/echo` }));

    // Granting nothing leaves the syscall itself refused.
    await client.deploy('narrow', image.bytes, { grants: ['none'] });
    expect(refusal(await request(c, 'narrow.fetch', { url: `http://${api}/echo` }))).toBe(
      'narrow declares berm.http.fetch, but its operator has not granted it',
    );
  });

  it("substitutes a secret for the chain's caller: its scope is the harness the call entered through, and the fetching image must declare it", async () => {
    await deploy(d.url, 'back', (await httpImage({ fetch: [api], secrets: ['scoped'] })).bytes);
    await deploy(d.url, 'bare', (await httpImage({ fetch: [api] })).bytes);
    await deploy(d.url, 'front', (await httpImage({ programs: ['back', 'bare'] })).bytes);
    await deploy(d.url, 'side', (await httpImage({ programs: ['back'] })).bytes);
    const req = { url: `http://${api}/echo`, headers: { authorization: '{secret:scoped}' } };
    const before = remote.seen.length;

    // Called directly, back is the top of its chain, and the secret is scoped to front.
    expect(refusal(await request(c, 'back.fetch', req))).toBe('secret scoped is not provided for calls that enter through back');
    // Through side, the same.
    const viaSide = valueOf(await callTool(c, 'side.call', { program: 'back', tool: 'fetch', args: req })) as { ok: Envelope };
    expect(refusal(viaSide.ok)).toBe('secret scoped is not provided for calls that enter through side');
    // Through front, but by an image that does not declare it: refused.
    const viaBare = valueOf(await callTool(c, 'front.call', { program: 'bare', tool: 'fetch', args: req })) as { ok: Envelope };
    expect(refusal(viaBare.ok)).toBe('secret "scoped" is not declared in deps.secrets of bare');
    await nothingSentSince(before);

    // Through front, by back, which declares it: sent with front's value.
    const viaFront = valueOf(await callTool(c, 'front.call', { program: 'back', tool: 'fetch', args: req })) as { ok: Envelope };
    expect(JSON.parse(ok(viaFront.ok).body).authorization).toBe('{secret:scoped}');
    expect(remote.seen.at(-1)!.headers.authorization).toBe(SCOPED);
    expect(d.stderr()).not.toContain(SCOPED);
  });

  it('blocks only its own call while the server holds the request: other calls answer, all before it does', async () => {
    const before = remote.seen.length;
    let settled = false;
    const slow = request(c, 'h.fetch', { url: `http://${api}/slow?held` }).finally(() => (settled = true));
    await remote.received(before + 1);
    expect(remote.seen[before]!.url).toBe('/slow?held');
    // These run on other workers and answer meanwhile.
    const others = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => request(c, 'h.fetch', { url: `http://${api}/echo?other=${i}` })),
      callTool(c, 'basic.echo', { n: 1 }),
    ]);
    others.slice(0, 4).forEach((e, i) => expect(JSON.parse(ok(e as Envelope).body).url).toBe(`/echo?other=${i}`));
    expect(valueOf(others[4] as CallToolResult)).toEqual({ n: 1 });
    expect(settled).toBe(false);
    remote.release('at last');
    expect(ok(await slow).body).toBe('at last');
  });

  it("stops a call at its harness's own time limit while the server holds the request, and aborts the request", async () => {
    await client.deploy('slowpoke', (await httpImage({ fetch: [api] })).bytes, { callTimeoutMs: '2s' });
    const detail = JSON.parse(await getText(`${d.url}/harnesses/slowpoke`));
    expect(detail.limits.timeout).toBe(2000);
    expect(detail.bindings).toEqual({ timeout: 2000 });

    const before = remote.seen.length;
    const slow = callTool(c, 'slowpoke.fetch', { url: `http://${api}/slow` });
    await remote.received(before + 1);
    const held: SeenRequest = remote.seen[before]!;
    expect(held.url).toBe('/slow');
    const stopped = await slow;
    expect(stopped.isError).toBe(true);
    // 2000 ms is the harness's own limit; the daemon's is 2 minutes.
    expect(textOf(stopped)).toMatch(stoppedAt('slowpoke.fetch', 2000));
    expect(stopped._meta).toEqual({ 'berm/error': { code: 'timeout' } });
    // The request under way was aborted with the call: the server sees its client go.
    await held.aborted;
    ok(await request(c, 'slowpoke.fetch', { url: `http://${api}/echo` }));
  });
});

describe('berm.http.proxy', () => {
  let remote: RemoteHost;
  let proxy: ForwardProxy;
  let d: RunningDaemon;
  let c: McpConnection;
  let api: string;

  beforeAll(async () => {
    remote = await RemoteHost.start();
    api = `api.example.com:${remote.port}`;
    remote.route('/echo', (_req, res, seen) =>
      res.end(JSON.stringify({ url: seen.url, host: seen.headers.host, via: seen.headers['x-via'] ?? null })),
    );
    // Only the proxy knows where api.example.com is: bermd has no --resolve for it here.
    proxy = await ForwardProxy.start({ [api]: remote.port });
    d = await startDaemon({ args: ['--serve', 'berm.http.fetch,berm.http.proxy', '--http-proxy', proxy.url] });
    await deploy(d.url, 'p', (await httpImage({ proxy: [api], fetch: [] })).bytes);
    c = await connect(d.url);
  });

  afterAll(async () => {
    await c?.close();
    await d?.stop();
    await proxy?.close();
    await remote?.close();
    if (d) await removeDir(d.stateDir);
  });

  it("sends a declared host's request through the operator's proxy", async () => {
    const answer = ok(await request(c, 'p.proxy', { url: `http://${api}/echo?through=proxy`, headers: { 'x-via': 'guest' } }));
    expect(JSON.parse(answer.body)).toEqual({ url: '/echo?through=proxy', host: api, via: 'guest' });
    // undici's ProxyAgent tunnels (CONNECT) by default; an absolute-form request would name the URL.
    expect(proxy.visits.length).toBeGreaterThan(0);
    for (const visit of proxy.visits) expect(visit.target).toContain(api);
    expect(remote.seen.length).toBe(1);
  });

  it('refuses an undeclared host before the proxy sees anything, and a fetch host the image does not declare', async () => {
    const visits = proxy.visits.length;
    const seen = remote.seen.length;
    expect(refusal(await request(c, 'p.proxy', { url: `http://other.example.com:${remote.port}/echo` }))).toBe(
      `http://other.example.com:${remote.port} is not declared by p under berm.http.proxy (declared: ${api})`,
    );
    // The hosts declared under berm.http.proxy are not berm.http.fetch's.
    expect(refusal(await request(c, 'p.fetch', { url: `http://${api}/echo` }))).toBe(
      `http://${api} is not declared by p under berm.http.fetch (declared: none)`,
    );
    expect(proxy.visits.length).toBe(visits);
    expect(remote.seen.length).toBe(seen);
  });
});

/** Runs bermd expecting it to refuse to start; answers its exit code and stderr. */
async function refusedStart(args: string[]): Promise<{ code: number | string; stderr: string }> {
  const state = await tempDir();
  try {
    const child = spawn(process.execPath, [BERMD_BIN, '--listen', '127.0.0.1:0', '--state', state, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', () => child.kill('SIGKILL'));
    const code = await exited(child);
    return { code, stderr };
  } finally {
    await removeDir(state);
  }
}

describe('what the operator turns on', () => {
  it('refuses to start with a secrets file group or others can read, without saying what is in it', async () => {
    const dir = await tempDir('bermd-secrets-');
    try {
      const file = path.join(dir, 'secrets.json');
      await writeFile(file, JSON.stringify({ example: SECRET }));
      await chmod(file, 0o644);
      const r = await refusedStart(['--serve', 'berm.http.fetch', '--secrets', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `bermd: --secrets ${file} is accessible to group or others (mode 0644); it holds secret values: chmod 600 ${file}`,
      );
      expect(r.stderr).not.toContain(SECRET);

      await chmod(file, 0o600);
      await writeFile(file, `{"example": "${SECRET}",}`);
      const bad = await refusedStart(['--secrets', file]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('is not JSON');
      expect(bad.stderr).not.toContain(SECRET);
    } finally {
      await removeDir(dir);
    }
  });

  it('refuses to serve berm.http.proxy without a proxy, and a syscall it cannot serve', async () => {
    const r = await refusedStart(['--serve', 'berm.http.proxy']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bermd: --serve berm.http.proxy needs --http-proxy URL: it sends through the operator's proxy");
    const unknown = await refusedStart(['--serve', 'berm.fs.read']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('bermd: --serve berm.fs.read: bermd serves berm.http.fetch and berm.http.proxy');
  });

  it('serves neither by default: a deploy declaring one is refused as unserved', async () => {
    const d = await startDaemon();
    try {
      const res = await put(`${d.url}/harnesses/h`, (await httpImage({ fetch: ['api.example.com'] })).bytes);
      expect(res.status).toBe(422);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unserved-syscall');
      expect(body.error.message).toBe('the image declares syscall berm.http.fetch, which this bermd does not serve');
      expect((await fetch(`${d.url}/harnesses/h`)).status).toBe(404);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});
