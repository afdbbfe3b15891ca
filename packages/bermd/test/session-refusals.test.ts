// A replica asked for 2025 sessions it does not hold reads the shared store once per id it must refuse:
// a flood of one forged id, or of a deleted session's id, costs one read, not one per request. A store
// that counts its reads stands in for PostgreSQL (the rows themselves are balancer.test.ts's business).
// And a `logging/setLevel` the store cannot take is answered with bermd's code, as /mcp answers it elsewhere.
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { Principal } from '../dist/auth/index.js';
import type { SessionRecord, SessionRecords, StoredSession } from '../dist/deploy/index.js';
import { BermdError } from '../dist/index.js';
import { buildMcpServer, McpSessions, sessionKey, type SessionState } from '../dist/mcp/index.js';
import { quietCore } from './mcp-core.js';

const core = quietCore();

/** Rows in memory, and how many times each key was read. */
class CountingRecords implements SessionRecords {
  readonly rows = new Map<string, SessionRecord>();
  readonly reads = new Map<string, number>();
  async create(record: SessionRecord): Promise<void> {
    this.rows.set(record.key, record);
  }
  async read(key: string): Promise<StoredSession | null> {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
    const row = this.rows.get(key);
    return row === undefined ? null : { ...row, expiresInMs: 60_000 };
  }
  async readMany(keys: readonly string[]): Promise<StoredSession[]> {
    return keys.flatMap((k) => {
      const row = this.rows.get(k);
      return row === undefined ? [] : [{ ...row, expiresInMs: 60_000 }];
    });
  }
  async setLevel(): Promise<void> {}
  async setSubscriptions(): Promise<void> {}
  async refresh(): Promise<void> {}
  async remove(key: string): Promise<void> {
    this.rows.delete(key);
  }
  async cancel(): Promise<void> {}
  async resourceUpdated(): Promise<void> {}
  async prune(): Promise<number> {
    return 0;
  }
  watch(): () => void {
    return () => {};
  }
}

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'counted', version: '0' } };
const alice = new Principal('alice', ['berm:call']);
const bob = new Principal('bob', ['berm:call']);

it('refuses a flood of one forged session id after one read of the store', async () => {
  const records = new CountingRecords();
  const sessions = new McpSessions(core, 60_000, 10, records);
  try {
    const forged = randomUUID();
    for (let i = 0; i < 50; i++) expect(await sessions.restore(forged, alice)).toBeUndefined();
    // Concurrent requests too: none of them reads again.
    const burst = await Promise.all(Array.from({ length: 20 }, () => sessions.restore(forged, alice)));
    expect(burst.every((s) => s === undefined)).toBe(true);
    expect(records.reads.get(sessionKey(forged))).toBe(1);

    // Another forged id is its own read: what is remembered is the id refused, not a refusal of all.
    const other = randomUUID();
    expect(await sessions.restore(other, alice)).toBeUndefined();
    expect(records.reads.get(sessionKey(other))).toBe(1);
  } finally {
    await sessions.close();
  }
});

it('still rebuilds a stored session, and remembers none refused for its principal alone', async () => {
  const records = new CountingRecords();
  const sessions = new McpSessions(core, 60_000, 10, records);
  try {
    const id = randomUUID();
    await records.create({ key: sessionKey(id), owner: 'alice', init: INIT, level: null });
    // Another principal's: refused, yet its row is there, so its owner's request is not refused with it.
    for (let i = 0; i < 3; i++) expect(await sessions.restore(id, bob)).toBeUndefined();
    const rebuilt = await sessions.restore(id, alice);
    expect(rebuilt?.sessionId).toBe(id);
    expect(rebuilt?.owner).toBe('alice');
    expect(records.reads.get(sessionKey(id))).toBe(4);
  } finally {
    await sessions.close();
  }
});

it('answers logging/setLevel with store-unavailable when the store cannot take it, and keeps the level it had', async () => {
  const location = 'postgres://berm@db.example:5432/berm';
  const state: SessionState = {
    saveLevel: () => Promise.reject(new BermdError('store-unavailable', `the store ${location} cannot be reached: connect ECONNREFUSED`)),
  };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildMcpServer(core, state);
  await server.connect(serverSide);
  const client = new Client({ name: 'in-memory', version: '0' });
  await client.connect(clientSide);
  try {
    const refused = await client.setLoggingLevel('info').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32000);
    expect((refused as McpError).message).toContain(`the store ${location} cannot be reached`);
    expect((refused as McpError).data).toEqual({ code: 'store-unavailable' });
    expect(state.level).toBeUndefined();
  } finally {
    await client.close();
  }
});
