// DNS rebinding and cross-site requests against a real bermd: requests carrying the Host and Origin a
// rebound or foreign web page sends, on every route, and what they leave behind (nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORECAST_LOG, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { HostPolicy, hostName, readAllowedHost } from '../dist/app/index.js';
import { exited, removeDir, startDaemon, tempDir, type RunningDaemon, BERMD_BIN } from './daemon.js';
import { connect, connectModern, deploy, envelope, modernHeaders } from './mcp-client.js';
import { INITIALIZE, MCP_HEADERS, MCP_PROTOCOL, rawRequest } from './raw-http.js';
import { spawn } from 'node:child_process';

function errorCode(body: string): unknown {
  return (JSON.parse(body) as { error: { code: unknown } }).error.code;
}

describe('the names a request may use', () => {
  const policy = new HostPolicy();
  const refused = (host: string | undefined, origin?: string): string | undefined => policy.refusal(host, origin)?.code;

  it('accepts localhost, 127.0.0.0/8 and [::1] on any port, or none, in any case', () => {
    for (const host of ['localhost:7477', 'LocalHost', '127.0.0.1:1', '127.255.0.9:7477', '[::1]:7477', '[::1]', '[0:0:0:0:0:0:0:1]:80']) {
      expect([host, refused(host)]).toEqual([host, undefined]);
    }
  });

  it('refuses every other name, and what is not a Host at all', () => {
    for (const host of [
      'evil.example:7477',
      'localhost.evil.example',
      '127.0.0.1.evil.example',
      '127.1',
      '127.0.0.256',
      '128.0.0.1',
      '[::2]',
      'localhost:abc',
      'localhost/x',
      'user@localhost',
      '',
      undefined,
    ]) {
      expect([host, refused(host)]).toEqual([host, 'forbidden-host']);
    }
  });

  it("accepts an Origin only when its own host is allowed, whatever the request's Host", () => {
    expect(refused('127.0.0.1:7477', 'http://localhost:3000')).toBeUndefined();
    expect(refused('127.0.0.1:7477', 'https://[::1]')).toBeUndefined();
    expect(refused('evil.example:7477', 'http://evil.example:7477')).toBe('forbidden-host');
    expect(refused('127.0.0.1:7477', 'http://evil.example:7477')).toBe('forbidden-origin');
    expect(refused('127.0.0.1:7477', 'null')).toBe('forbidden-origin');
    expect(refused('127.0.0.1:7477', 'chrome-extension://localhost')).toBe('forbidden-origin');
  });

  it('adds the names the operator allows and the one address bermd listens on, never a wildcard', () => {
    const proxied = new HostPolicy({ listen: '10.1.2.3', allowed: ['proxy.example', '[fd00::1]'] });
    expect(proxied.refusal('proxy.example:443', 'https://proxy.example')).toBeUndefined();
    expect(proxied.refusal('10.1.2.3:7477', undefined)).toBeUndefined();
    expect(proxied.refusal('[fd00::1]:7477', undefined)).toBeUndefined();
    expect(proxied.refusal('other.example', undefined)?.code).toBe('forbidden-host');
    expect(new HostPolicy({ listen: '0.0.0.0' }).refusal('0.0.0.0:7477', undefined)?.code).toBe('forbidden-host');
    expect(new HostPolicy({ listen: '::' }).refusal('[::]:7477', undefined)?.code).toBe('forbidden-host');
    expect(new HostPolicy({ listen: 'fd00::2' }).refusal('[fd00::2]:7477', undefined)).toBeUndefined();
  });

  it('reads --allowed-host values as names without a port', () => {
    expect(readAllowedHost('Proxy.Example')).toBe('proxy.example');
    expect(readAllowedHost('fd00::1')).toBe('[fd00::1]');
    expect(readAllowedHost('[FD00:0::1]')).toBe('[fd00::1]');
    for (const bad of ['proxy.example:443', 'http://proxy.example', 'a b', '', '[::1]:80'])
      expect([bad, readAllowedHost(bad)]).toEqual([bad, undefined]);
    expect(hostName('EXAMPLE.com:80')).toBe('example.com');
  });
});

describe('a real bermd answering a rebound or foreign page', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--log-level', 'debug'] });
    await deploy(d.url, 'relay', (await relayImage()).bytes);
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
  });

  const evil = (): Record<string, string> => ({ host: `evil.example:${d.port}` });

  it('refuses a deploy under a foreign Host (403 forbidden-host), and nothing is deployed', async () => {
    const image = await harnessImage(manifestWithTools(['echo']));
    const res = await rawRequest(d.url, {
      method: 'PUT',
      path: '/harnesses/planted',
      headers: { ...evil(), 'content-type': 'application/wasm' },
      body: image,
    });
    expect(res.status).toBe(403);
    expect(errorCode(res.body)).toBe('forbidden-host');
    expect(JSON.parse(res.body).error.message).toContain(`evil.example:${d.port}`);
    expect((await fetch(`${d.url}/harnesses/planted`)).status).toBe(404);
    // The same request addressed to bermd by its name deploys: the refusal was the Host's.
    expect((await rawRequest(d.url, { method: 'PUT', path: '/harnesses/planted', body: image })).status).toBe(201);
    await fetch(`${d.url}/harnesses/planted`, { method: 'DELETE' });
  });

  it('refuses a delete and a listing under a foreign Host, and the harness stays', async () => {
    await deploy(d.url, 'kept', await harnessImage(manifestWithTools(['echo'])));
    const del = await rawRequest(d.url, { method: 'DELETE', path: '/harnesses/kept', headers: evil() });
    expect([del.status, errorCode(del.body)]).toEqual([403, 'forbidden-host']);
    const list = await rawRequest(d.url, { path: '/harnesses', headers: evil() });
    expect([list.status, errorCode(list.body)]).toEqual([403, 'forbidden-host']);
    expect(list.body).not.toContain('kept');
    const image = await rawRequest(d.url, { path: '/harnesses/kept/image', headers: evil() });
    expect(image.status).toBe(403);
    expect((await fetch(`${d.url}/harnesses/kept`)).status).toBe(200);
  });

  it('refuses a page whose Origin is foreign even when its Host is loopback', async () => {
    const res = await rawRequest(d.url, {
      method: 'PUT',
      path: '/harnesses/csrf',
      headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: await harnessImage(manifestWithTools(['echo'])),
    });
    expect([res.status, errorCode(res.body)]).toEqual([403, 'forbidden-origin']);
    expect((await fetch(`${d.url}/harnesses/csrf`)).status).toBe(404);
    // A page of this machine (another port of localhost) is not foreign.
    const local = await rawRequest(d.url, { path: '/harnesses', headers: { origin: 'http://localhost:3000' } });
    expect(local.status).toBe(200);
  });

  it('refuses the page and its event stream under a foreign Host, and from a foreign Origin', async () => {
    for (const path of ['/', '/events']) {
      const res = await rawRequest(d.url, { path, headers: evil() });
      expect([path, res.status, errorCode(res.body)]).toEqual([path, 403, 'forbidden-host']);
      // What a rebound page would have read: nothing of the page, no event.
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const framed = await rawRequest(d.url, { path, headers: { origin: 'http://evil.example' } });
      expect([path, framed.status, errorCode(framed.body)]).toEqual([path, 403, 'forbidden-origin']);
    }
    // Addressed to bermd by its name, the page is served.
    const page = await rawRequest(d.url, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  });

  it('refuses routes nobody serves before saying they do not exist', async () => {
    const res = await rawRequest(d.url, { path: '/nowhere', headers: evil() });
    expect([res.status, errorCode(res.body)]).toEqual([403, 'forbidden-host']);
    expect((await rawRequest(d.url, { path: '/nowhere' })).status).toBe(404);
  });

  it('refuses /mcp as JSON-RPC: no session starts and no tool runs', async () => {
    const opened = (): number => d.log().filter((e) => e.msg === 'mcp session opened').length;
    const before = opened();
    const ran = d.log().filter((e) => e.msg === FORECAST_LOG.message).length;
    // What a rebound page sends: its own name as both Host and Origin.
    const init = await rawRequest(d.url, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, ...evil(), origin: `http://evil.example:${d.port}` },
      body: INITIALIZE,
    });
    expect(init.status).toBe(403);
    expect(init.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(init.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'forbidden-host' } } });
    const cross = await rawRequest(d.url, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, origin: 'http://evil.example' },
      body: INITIALIZE,
    });
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body)).toMatchObject({ error: { data: { code: 'forbidden-origin' } } });

    // A session a real client holds: a forged request naming it runs nothing.
    const client = await connect(d.url);
    try {
      expect(opened()).toBe(before + 1);
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'relay.forecast', arguments: { days: 1 } },
      });
      const session = { 'mcp-session-id': client.transport.sessionId!, 'mcp-protocol-version': MCP_PROTOCOL };
      for (const headers of [evil(), { origin: 'http://evil.example' }]) {
        const res = await rawRequest(d.url, {
          method: 'POST',
          path: '/mcp',
          headers: { ...MCP_HEADERS, ...session, ...headers },
          body: call,
        });
        expect(res.status).toBe(403);
      }
      const stream = await rawRequest(d.url, { method: 'DELETE', path: '/mcp', headers: { ...session, ...evil() } });
      expect(stream.status).toBe(403);
      expect(d.log().filter((e) => e.msg === FORECAST_LOG.message)).toHaveLength(ran);
      // The session is still there, and the same call from the client runs.
      const result = await client.client.callTool({ name: 'relay.forecast', arguments: { days: 1 } });
      expect(result.isError).toBeFalsy();
      expect(d.log().filter((e) => e.msg === FORECAST_LOG.message)).toHaveLength(ran + 1);
    } finally {
      await client.close();
    }
  });

  it('refuses a 2026-07-28 request the same way: its tool does not run', async () => {
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'relay.forecast', arguments: { days: 3 }, _meta: envelope() },
    });
    const before = d.log().filter((e) => e.msg === FORECAST_LOG.message).length;
    for (const headers of [evil(), { origin: `http://evil.example:${d.port}` }]) {
      const res = await rawRequest(d.url, {
        method: 'POST',
        path: '/mcp',
        headers: { ...modernHeaders('tools/call', 'relay.forecast'), ...headers },
        body: call,
      });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error.data.code).toMatch(/^forbidden-(host|origin)$/);
    }
    expect(d.log().filter((e) => e.msg === FORECAST_LOG.message)).toHaveLength(before);
    // A client of that generation addressing bermd by its name is served.
    const modern = await connectModern(d.url);
    try {
      const result = await modern.client.callTool({ name: 'relay.forecast', arguments: { days: 3 } });
      expect(result.isError).toBeFalsy();
      expect(d.log().filter((e) => e.msg === FORECAST_LOG.message)).toHaveLength(before + 1);
    } finally {
      await modern.close();
    }
  });

  it('refuses a request without a Host header', async () => {
    const net = await import('node:net');
    const socket = net.connect(d.port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.end('GET /harnesses HTTP/1.0\r\n\r\n');
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.[01] 403 /);
    expect(answer).toContain('"forbidden-host"');
  });
});

describe('bermd with --allowed-host', () => {
  it('answers the names it is given, and still no others', async () => {
    const d = await startDaemon({ args: ['--allowed-host', 'proxy.example', '--allowed-host', 'Other.Example'] });
    try {
      for (const host of ['proxy.example', `proxy.example:${d.port}`, 'other.example:443']) {
        const res = await rawRequest(d.url, { path: '/harnesses', headers: { host, origin: `https://${host.split(':')[0]}` } });
        expect([host, res.status]).toEqual([host, 200]);
      }
      const res = await rawRequest(d.url, { path: '/harnesses', headers: { host: 'evil.example' } });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error.message).toContain('proxy.example, other.example');
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

describe('listening beyond loopback', () => {
  async function run(args: string[]): Promise<{ code: number | string; stderr: string; stdout: string }> {
    const state = await tempDir();
    try {
      const child = spawn(process.execPath, [BERMD_BIN, '--state', state, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      return { code: await exited(child), stderr, stdout };
    } finally {
      await removeDir(state);
    }
  }

  it('refuses to start without --token-file (exit 2), naming the flag that accepts the risk', async () => {
    const { code, stderr, stdout } = await run(['--listen', '0.0.0.0:0']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('--listen 0.0.0.0:0: 0.0.0.0 is reachable from other machines');
    expect(stderr).toContain('--token-file FILE');
    expect(stderr).toContain('--insecure-no-auth');
  });

  it('refuses an --allowed-host with a port', async () => {
    const { code, stderr } = await run(['--allowed-host', 'proxy.example:8080']);
    expect(code).toBe(2);
    expect(stderr).toContain('--allowed-host proxy.example:8080: expected a host name or address without a port');
  });

  it('starts with --insecure-no-auth, says so in its log, and still checks Host', async () => {
    const d = await startDaemon({ args: ['--listen', '0.0.0.0:0', '--insecure-no-auth'] });
    try {
      expect(d.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      const local = `http://127.0.0.1:${d.port}`;
      expect((await rawRequest(local, { path: '/harnesses' })).status).toBe(200);
      expect((await rawRequest(local, { path: '/harnesses', headers: { host: `evil.example:${d.port}` } })).status).toBe(403);
      expect(d.log().some((e) => e.level === 40 && String(e.msg).includes('without auth (--insecure-no-auth)'))).toBe(true);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});
