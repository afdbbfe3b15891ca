// Three bermd replicas on one PostgreSQL database behind Debian's HAProxy in plain round robin, no affinity:
// a 2025-era MCP session opened through one replica is served by any (each request may reach another), its
// stream carries list changes made through any, a replica stopped mid-run or killed loses it nothing, and a
// replica started after it was opened, added to the balancer then, serves it as well. A
// forged, altered, expired or other principal's session id is refused 404, a DELETE ends it everywhere, and
// a cancel sent to one replica stops the call running on the other.
// Real processes, real HTTP, the MCP SDK 1.x client.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sessionKey } from '../dist/mcp/index.js';
import { SPIN_LOG, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { bearer, writeAccess } from './access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { type Balancer, describeHaproxy, startHaproxy } from './haproxy.js';
import { connect, deploy, type McpConnection, valueOf } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { NO_RECONCILIATION, startReplicas, stopAll, until, within } from './replicas.js';

/** The SDK session's 200 calls: across the three replicas, while one stops, once a late one has joined, and after one is killed. */
const CALLS = { spread: 100, stopping: 40, late: 30, killed: 30 };

/** A raw 2025 request to `/mcp` at `base`: its status, and the session id it answered with. */
async function post(base: string, token: string, body: unknown, session?: string): Promise<{ status: number; session: string | null }> {
  const headers: Record<string, string> = {
    ...bearer(token),
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
  };
  if (session !== undefined) headers['mcp-session-id'] = session;
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  await res.body?.cancel();
  return { status: res.status, session: res.headers.get('mcp-session-id') };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** The headers of a 2025 request in session `id`. */
function inSession(token: string, id: string): Record<string, string> {
  return {
    ...bearer(token),
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
    'mcp-session-id': id,
  };
}

/** Whether `d` logged (at debug) that it finished a call of `session`. */
function callsOn(d: RunningDaemon, session: string): number {
  return d.log().filter((e) => e.msg === 'tools/call finished' && e.session === session).length;
}

describeHaproxy('a plain round-robin balancer', () => {
  describePostgres('in front of three bermd replicas on one PostgreSQL database', { timeout: 180_000 }, () => {
    let db: string;
    let dir: string;
    let tokens: Record<string, string>;
    let replicas: RunningDaemon[];
    let replicaArgs: string[];
    let balancer: Balancer;
    const connections: McpConnection[] = [];

    beforeAll(async () => {
      db = await createDatabase();
      dir = await tempDir('bermd-balancer-');
      const access = await writeAccess(dir, [
        { name: 'alice', scopes: ['berm:call', 'berm:deploy', 'berm:read'] },
        { name: 'bob', scopes: ['berm:call'] },
      ]);
      tokens = access.tokens;
      // A call's time limit far beyond any wait here: a call that ends, ends because it was cancelled.
      replicaArgs = [...NO_RECONCILIATION, '--access', access.file, '--log-level', 'debug', '--call-timeout', '10m'];
      replicas = await startReplicas(3, db, { args: replicaArgs });
      balancer = await startHaproxy(replicas.map((d) => d.port));
      await deploy(replicas[0]!.url, 'h', await harnessImage(manifestWithTools(['echo'])), bearer(tokens.alice!));
    });
    afterAll(async () => {
      for (const c of connections.splice(0)) await c.close().catch(() => {});
      await balancer?.close();
      await stopAll(replicas ?? []);
      await dropDatabase(db);
      await removeDir(dir);
    });

    const alive = (): RunningDaemon[] => replicas.filter((d) => d.process.exitCode === null && d.process.signalCode === null);

    it('refuses a forged, an altered, an expired and another principal’s session id with 404 on every replica', async () => {
      const opened = await post(alive()[0]!.url, tokens.alice!, INITIALIZE);
      expect(opened.status).toBe(200);
      const id = opened.session!;
      const altered = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
      for (const d of alive()) {
        expect((await post(d.url, tokens.alice!, PING, id)).status).toBe(200);
        expect((await post(d.url, tokens.alice!, PING, randomUUID())).status).toBe(404);
        expect((await post(d.url, tokens.alice!, PING, altered)).status).toBe(404);
        expect((await post(d.url, tokens.bob!, PING, id)).status).toBe(404);
      }
      // Expired in the store: a replica that does not hold it refuses it.
      const other = await post(alive()[0]!.url, tokens.alice!, INITIALIZE);
      await sql(db, "UPDATE berm_session SET expires_at = now() - interval '1 second' WHERE key = $1", [sessionKey(other.session!)]);
      const fresh = alive().at(-1)!;
      expect((await post(fresh.url, tokens.alice!, PING, other.session!)).status).toBe(404);
    });

    it('DELETE through one replica ends the session on the other, which held it too', async () => {
      const [a, b] = alive();
      if (b === undefined) throw new Error('this test needs both replicas');
      const opened = await post(a!.url, tokens.alice!, INITIALIZE);
      const id = opened.session!;
      expect((await post(b.url, tokens.alice!, PING, id)).status).toBe(200);
      const res = await fetch(`${a!.url}/mcp`, { method: 'DELETE', headers: { ...bearer(tokens.alice!), 'mcp-session-id': id } });
      expect(res.status).toBe(200);
      expect(await sql(db, 'SELECT key FROM berm_session WHERE key = $1', [sessionKey(id)])).toEqual([]);
      await until('the other replica to end its copy', async () =>
        (await post(b.url, tokens.alice!, PING, id)).status === 404 ? true : undefined,
      );
    });

    it('stops a call running on one replica when its cancel reaches the other', async () => {
      const [a, b] = alive();
      if (b === undefined) throw new Error('this test needs both replicas');
      await deploy(a!.url, 'spinner', (await relayImage()).bytes, bearer(tokens.alice!));
      const id = (await post(a!.url, tokens.alice!, INITIALIZE)).session!;
      const headers = inSession(tokens.alice!, id);
      const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
      expect((await post(a!.url, tokens.alice!, initialized, id)).status).toBe(202);
      const call = { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'spinner.spin', arguments: {} } };
      const answer = fetch(`${a!.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(call) }).then(async (res) => ({
        status: res.status,
        body: await res.text(),
      }));
      await within(
        'the call to run on the first replica',
        a!.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'spinner'),
      );

      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'enough' } };
      expect((await post(b.url, tokens.alice!, cancel, id)).status).toBe(202);
      await within(
        'the first replica to log the call cancelled',
        a!.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'spinner'),
      );
      // Cancelled: its stream ends with no response (MCP cancellation), where a time limit would answer an error.
      const res = await within('the call’s answer to end', answer);
      expect(res).toEqual({ status: 200, body: '' });
      expect(b.log().some((e) => e.msg === 'call cancelled by its caller' && e.harness === 'spinner')).toBe(false);
    });

    it('serves one SDK session from every replica, a late one too, carries list changes, and loses nothing when one stops or dies', async () => {
      const [a, b, c] = replicas as [RunningDaemon, RunningDaemon, RunningDaemon];
      if (alive().length !== 3) throw new Error('this test needs the three replicas it started with');
      const conn = await connect(balancer.url, bearer(tokens.alice!));
      connections.push(conn);
      const id = conn.transport.sessionId!;
      const call = async (query: string): Promise<void> => {
        const result = (await conn.client.callTool({ name: 'h.echo', arguments: { query } })) as CallToolResult;
        expect(valueOf(result)).toEqual({ query });
      };
      expect((await conn.client.listTools()).tools.map((t) => t.name)).toContain('h.echo');
      for (let i = 0; i < CALLS.spread; i++) await call(`q${i}`);
      // Round robin: each replica answered a share of the calls.
      await until('every call logged', async () => (callsOn(a, id) + callsOn(b, id) + callsOn(c, id) === CALLS.spread ? true : undefined));
      for (const d of [a, b, c]) expect(callsOn(d, id)).toBeGreaterThanOrEqual(CALLS.spread / 10);

      // A deploy through one replica reaches the stream, wherever it is open.
      await until('the stream open', async () =>
        replicas.some((d) => d.log().some((e) => e.msg === 'mcp notification stream opened' && e.session === id)) ? true : undefined,
      );
      await deploy(b.url, 'g', await harnessImage(manifestWithTools(['echo'])), bearer(tokens.alice!));
      // A stream rebuilt on a replica may first say "list again" once; a change after the deploy lists g.
      await within(
        'a tools list_changed after which g is listed',
        (async () => {
          for (;;) {
            await conn.toolsChanged.next();
            if ((await conn.client.listTools()).tools.some((t) => t.name === 'g.echo')) return;
          }
        })(),
      );

      // One replica stops in the middle of a run of calls; the client goes on, in the same session. A
      // replica that was not running when the session was opened starts meanwhile.
      const errors: Error[] = [];
      conn.client.onerror = (e) => errors.push(e);
      const stopped = within('the first replica to exit', a.stop('SIGTERM'));
      const starting = startDaemon({ store: db, args: replicaArgs });
      for (let i = 0; i < CALLS.stopping; i++) await call(`after ${i}`);
      await stopped;
      const late = await starting;
      replicas.push(late);
      expect(late.log().some((e) => e.session === id)).toBe(false);

      // The late replica joins the balancer's rotation and serves the session it never saw opened.
      await balancer.addServer('late', late.port);
      for (let i = 0; i < CALLS.late; i++) await call(`late ${i}`);
      await until('the late replica to log its share of the calls', async () => (callsOn(late, id) >= CALLS.late / 10 ? true : undefined));
      expect(late.log().filter((e) => e.msg === 'mcp session rebuilt from the store' && e.session === id)).toHaveLength(1);

      // A replica dies (kill -9: no drain, its stream cut). The client's next requests reach the others,
      // in the same session, and a change made after the death still reaches its stream, reopened elsewhere.
      const killed = await within('a replica killed', c.stop('SIGKILL'));
      expect(killed).toBe('SIGKILL');
      for (let i = 0; i < CALLS.killed; i++) await call(`killed ${i}`);
      await deploy(late.url, 'k', await harnessImage(manifestWithTools(['echo'])), bearer(tokens.alice!));
      await within(
        'a tools list_changed after which k is listed',
        (async () => {
          for (;;) {
            await conn.toolsChanged.next();
            if ((await conn.client.listTools()).tools.some((t) => t.name === 'k.echo')) return;
          }
        })(),
      );

      expect(conn.transport.sessionId).toBe(id);
      const opened = replicas.flatMap((d) => d.log().filter((e) => e.msg === 'mcp session opened' && e.session === id));
      expect(opened).toHaveLength(1);
      expect(callsOn(b, id) + callsOn(c, id)).toBeGreaterThan(CALLS.spread / 2);
      expect(errors.filter((e) => !/SSE stream disconnected|terminated/i.test(e.message))).toEqual([]);
    });
  });
});
