// The deploy history's control API end to end: a real bermd (one on a state directory, two replicas on one
// PostgreSQL database), real HTTP with static tokens from an `--access` file, and the MCP SDK's client
// to see what a name serves. The history of deploys, forced deploys and undeploys with who made each and
// through which replica, paged; the retained images, byte for byte; rollbacks by one step, by steps and
// by digest, through the compatibility gate, dry or forced, undoing an undeploy; the bad requests and the
// scopes each route needs; rollbacks through two replicas at once; and the flags that set it all.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DeployAnswer, HistoryEntry, HistoryPage, RetainedImages, UndeployedHarness } from '@berm/protocol';
import type { ManifestData } from '@berm/manifest';
import { readSettingText, settingByFlag } from '@berm/protocol';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf, LOCK_CLASS } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { type AccessFile, as, bearer, errorOf, writeAccess } from './access.js';
import { exited, launchDaemon, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, type McpConnection, put, valueOf } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { detail, NO_RECONCILIATION, stopAll, until } from './replicas.js';

const PRINCIPALS = [
  { name: 'reader', scopes: ['berm:read'] },
  { name: 'deployer', scopes: ['berm:read', 'berm:deploy', 'berm:call'] },
  { name: 'forcer', scopes: ['berm:read', 'berm:deploy', 'berm:force', 'berm:call'] },
  { name: 'caller', scopes: ['berm:call'] },
];

/** A digest no image has. */
const NO_IMAGE = `sha256:${'0'.repeat(64)}`;

/**
 * An image whose tools are `tools`, each echoing, and `which`, answering `version`: what a call through
 * /mcp shows of which image a name serves.
 */
function versioned(version: string, tools: string[] = [], overrides: Partial<ManifestData> = {}): Promise<Uint8Array> {
  return harnessImage(manifestWithTools(['which', ...tools], { version, ...overrides }), {
    tools: { which: { kind: 'const', envelope: { ok: { query: version } } } },
  });
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

/** The `{"error": {...}}` of an answer that must have `status`. */
async function refusal(res: Response, status: number): Promise<{ code: string; message: string; [k: string]: unknown }> {
  return (await json<{ error: { code: string; message: string } }>(res, status)).error;
}

describe('the deploy history API of a bermd on a state directory', { timeout: 120_000 }, () => {
  let dir: string;
  let access: AccessFile;
  let d: RunningDaemon;
  const sessions: McpConnection[] = [];
  const token = (name: string): string => access.tokens[name]!;
  const at = (p: string): string => `${d.url}${p}`;

  beforeAll(async () => {
    dir = await tempDir('bermd-history-api-');
    access = await writeAccess(dir, PRINCIPALS);
    d = await startDaemon({ args: ['--access', access.file, '--replica-name', 'solo'] });
  });
  afterAll(async () => {
    for (const s of sessions.splice(0)) await s.close().catch(() => {});
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    await removeDir(dir);
  });

  const deployAs = async (who: string, name: string, bytes: Uint8Array, query = ''): Promise<DeployAnswer> => {
    const res = await put(at(`/harnesses/${name}${query}`), bytes, bearer(token(who)));
    expect([200, 201], await res.clone().text()).toContain(res.status);
    return (await res.json()) as DeployAnswer;
  };
  const undeployAs = async (who: string, name: string): Promise<void> => {
    expect((await as(token(who), at(`/harnesses/${name}`), { method: 'DELETE' })).status).toBe(204);
  };
  const history = (name: string, query = '', who = 'reader'): Promise<Response> => as(token(who), at(`/harnesses/${name}/history${query}`));
  const rollback = (name: string, body?: string, query = '', who = 'deployer'): Promise<Response> =>
    as(token(who), at(`/harnesses/${name}/rollback${query}`), { method: 'POST', body });
  const served = async (name: string): Promise<{ digest: string; version: string; tools: string[] }> =>
    json(await as(token('reader'), at(`/harnesses/${name}`)), 200);

  /** A 2025 MCP session as `who`, closed after the file's tests. */
  async function session(who: string): Promise<McpConnection> {
    const c = await connect(d.url, bearer(token(who)));
    sessions.push(c);
    return c;
  }

  /** What `name.which` answers through /mcp: the version of the image the name serves. */
  async function whichVersion(c: McpConnection, name: string): Promise<unknown> {
    return (valueOf((await c.client.callTool({ name: `${name}.which`, arguments: { query: '?' } })) as CallToolResult) as { query: string })
      .query;
  }

  it('lists deploys, a forced deploy and an undeploy newest first, with who, where, from, to, the breaks and the notices', async () => {
    const v1 = await versioned('0.1.0', ['used'], { deps: { programs: ['absent'], syscalls: {}, secrets: [] } });
    const v2 = await versioned('0.2.0');
    const first = await deployAs('deployer', 'hist', v1);
    expect(first.notices.map((n) => n.code)).toEqual(['program-not-deployed']);
    const c = await session('deployer');
    expect(valueOf((await c.client.callTool({ name: 'hist.used', arguments: { query: 'q' } })) as CallToolResult)).toEqual({ query: 'q' });
    // v2 drops a tool just called: only forced does it pass.
    expect((await refusal(await put(at('/harnesses/hist'), v2, bearer(token('deployer'))), 409)).code).toBe('breaks-callers');
    const forced = await deployAs('forcer', 'hist', v2, '?force=true');
    await undeployAs('deployer', 'hist');

    const page = await json<HistoryPage>(await history('hist'), 200);
    expect(page.next_cursor).toBeNull();
    expect(page.entries.map((e) => [e.action, e.principal, e.replica, e.from, e.to, e.forced])).toEqual([
      ['undeploy', 'deployer', 'solo', { digest: digestOf(v2), version: '0.2.0' }, null, false],
      ['deploy', 'forcer', 'solo', { digest: digestOf(v1), version: '0.1.0' }, { digest: digestOf(v2), version: '0.2.0' }, true],
      ['deploy', 'deployer', 'solo', null, { digest: digestOf(v1), version: '0.1.0' }, false],
    ]);
    const [undeploy, replace, deploy] = page.entries as [HistoryEntry, HistoryEntry, HistoryEntry];
    // Each deploy's answer carries the entry it made, as the history has it.
    expect(deploy).toEqual(first.entry);
    expect(replace).toEqual(forced.entry);
    expect(deploy.notices).toEqual(first.notices);
    expect(deploy.notices[0]).toMatchObject({ code: 'program-not-deployed', program: 'absent' });
    expect([deploy.reported, deploy.forced_past]).toEqual([[], []]);
    expect(replace.forced_past).toEqual([expect.objectContaining({ code: 'tool-removed', tool: 'used', used: true })]);
    expect(replace.reported).toEqual(replace.forced_past);
    expect(replace.notices).toEqual([]);
    expect([undeploy.reported, undeploy.forced_past, undeploy.notices]).toEqual([[], [], []]);
    const times = page.entries.map((e) => Date.parse(e.at));
    expect(times.every((t, i) => i === 0 || t <= times[i - 1]!)).toBe(true);
  });

  it('pages with ?limit= and ?cursor=, each page newest first, the last with no cursor', async () => {
    const images = await Promise.all(['0.1.0', '0.2.0', '0.3.0', '0.4.0', '0.5.0'].map((v) => versioned(v)));
    for (const bytes of images) await deployAs('deployer', 'paged', bytes);
    const whole = await json<HistoryPage>(await history('paged'), 200);
    expect(whole.entries.map((e) => e.to?.version)).toEqual(['0.5.0', '0.4.0', '0.3.0', '0.2.0', '0.1.0']);

    const seen: HistoryEntry[][] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page: HistoryPage = await json<HistoryPage>(await history('paged', query), 200);
      seen.push(page.entries);
      cursor = page.next_cursor;
    } while (cursor !== null && seen.length < 10);
    expect(seen.map((p) => p.map((e) => e.to?.version))).toEqual([['0.5.0', '0.4.0'], ['0.3.0', '0.2.0'], ['0.1.0']]);
    expect(seen.flat()).toEqual(whole.entries);
    // A page that ends exactly at the oldest entry says there is none older.
    expect((await json<HistoryPage>(await history('paged', '?limit=5'), 200)).next_cursor).toBeNull();
  });

  it('refuses a bad cursor, a limit out of range and an unknown parameter (400 bad-request, naming it); an unknown name has an empty history; a bad name is 400 bad-name', async () => {
    await deployAs('deployer', 'queried', await versioned('0.1.0'));
    expect(await refusal(await history('queried', '?cursor=not-a-cursor'), 400)).toMatchObject({
      code: 'bad-request',
      message: "the cursor for queried's history is not one bermd gave: start again without it",
    });
    // A cursor longer than any bermd gives is refused before it is read.
    expect(await refusal(await history('queried', `?cursor=${'x'.repeat(100)}`), 400)).toMatchObject({
      code: 'bad-request',
      message: "query parameter cursor takes the next_cursor of the history's previous page, as given",
    });
    for (const [query, parameter] of [
      ['?limit=0', 'limit'],
      ['?limit=999999', 'limit'],
      ['?limit=two', 'limit'],
      ['?limit=1&limit=2', 'limit'],
      ['?page=2', 'page'],
    ]) {
      const error = await refusal(await history('queried', query), 400);
      expect([query, error.code]).toEqual([query, 'bad-request']);
      expect(error.message, query).toContain(parameter);
    }
    // What a parameter's refusal says it takes; an unknown one's, what the route takes (not a deploy's parameters).
    for (const query of ['?limit=0', '?limit=999999', '?limit=two'])
      expect((await refusal(await history('queried', query), 400)).message).toBe(
        'query parameter limit takes a whole number of entries from 1 to 500',
      );
    expect((await refusal(await history('queried', '?page=2'), 400)).message).toBe(
      'unknown query parameter page; GET /harnesses/{name}/history takes cursor, limit',
    );
    // A deploy's says a deploy's.
    const deployUnknown = await refusal(
      await put(at('/harnesses/queried?cursor=x'), await versioned('0.2.0'), bearer(token('deployer'))),
      400,
    );
    expect(deployUnknown.message).toMatch(/^unknown query parameter cursor; a deploy takes force, dry-run/);

    expect(await json<HistoryPage>(await history('never-deployed'), 200)).toEqual({ entries: [], next_cursor: null });
    const badName = await refusal(await history('no.dots'), 400);
    expect(badName).toMatchObject({ code: 'bad-name', name: 'no.dots' });
  });

  it('keeps the replaced image with its bindings: GET .../images lists it, GET .../images/{digest} answers its bytes, and the served one too', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0');
    await deployAs('deployer', 'img', v1, '?max_result_size=64K');
    await deployAs('deployer', 'img', v2);
    const kept = await json<RetainedImages>(await as(token('reader'), at('/harnesses/img/images')), 200);
    expect(kept).toEqual({
      name: 'img',
      current: { digest: digestOf(v2), version: '0.2.0' },
      retained: [{ digest: digestOf(v1), version: '0.1.0', retained_at: expect.any(String), bindings: { max_result_size: 64 * 1024 } }],
    });
    const [{ entry }] = (await json<HistoryPage>(await history('img', '?limit=1'), 200)).entries.map((entry) => ({ entry }));
    // It stopped being served when v2's deploy was made.
    expect(kept.retained[0]!.retained_at).toBe(entry!.at);

    const old = await as(token('reader'), at(`/harnesses/img/images/${digestOf(v1)}`));
    expect(old.status).toBe(200);
    expect(old.headers.get('content-type')).toBe('application/wasm');
    expect(Buffer.from(await old.arrayBuffer()).equals(Buffer.from(v1))).toBe(true);
    const current = await as(token('reader'), at(`/harnesses/img/images/${digestOf(v2)}`));
    expect(current.status).toBe(200);
    expect(current.headers.get('content-type')).toBe('application/wasm');
    const bytes = Buffer.from(await current.arrayBuffer());
    expect(bytes.equals(Buffer.from(v2))).toBe(true);
    const image = await as(token('reader'), at('/harnesses/img/image'));
    expect(Buffer.from(await image.arrayBuffer()).equals(bytes)).toBe(true);

    expect(await refusal(await as(token('reader'), at(`/harnesses/img/images/${NO_IMAGE}`)), 404)).toMatchObject({
      code: 'not-retained',
      message: expect.stringContaining(NO_IMAGE),
    });
    for (const digest of ['sha256:abc', `sha256:${'A'.repeat(64)}`, 'latest', `md5:${'0'.repeat(32)}`]) {
      const error = await refusal(await as(token('reader'), at(`/harnesses/img/images/${digest}`)), 400);
      expect([digest, error.code]).toEqual([digest, 'bad-request']);
      expect(error.message).toBe(`${digest} is not an image digest: sha256: and 64 hex digits, as berm history shows`);
    }
    // Another name's image is not this one's.
    await deployAs('deployer', 'img-other', await versioned('0.9.0'));
    expect((await refusal(await as(token('reader'), at(`/harnesses/img-other/images/${digestOf(v1)}`)), 404)).code).toBe('not-retained');
    expect((await refusal(await as(token('reader'), at('/harnesses/img-never/images')), 404)).code).toBe('not-found');
    expect((await refusal(await as(token('reader'), at('/harnesses/no.dots/images')), 400)).code).toBe('bad-name');

    // Going back restores the bindings the image was deployed with.
    expect((await served('img')).digest).toBe(digestOf(v2));
    await json<DeployAnswer>(await rollback('img'), 200);
    const back = await json<{ digest: string; bindings: unknown; limits: { max_result_size: number } }>(
      await as(token('reader'), at('/harnesses/img')),
      200,
    );
    expect([back.digest, back.bindings, back.limits.max_result_size]).toEqual([digestOf(v1), { max_result_size: 64 * 1024 }, 64 * 1024]);
  });

  it('rolls back one step, two steps and to a digest, each a history entry, the old image then served on /mcp; a dry run changes nothing', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0', ['b']);
    const v3 = await versioned('0.3.0', ['b', 'c']);
    for (const bytes of [v1, v2, v3]) await deployAs('deployer', 'rb', bytes);
    const c = await session('deployer');
    expect(await whichVersion(c, 'rb')).toBe('0.3.0');
    const entries = async (): Promise<HistoryEntry[]> => (await json<HistoryPage>(await history('rb'), 200)).entries;
    expect(await entries()).toHaveLength(3);

    const dry = await json<DeployAnswer>(await rollback('rb', undefined, '?dry-run=true'), 200);
    expect(dry).toMatchObject({ dry_run: true, digest: digestOf(v2), version: '0.2.0' });
    expect(dry.entry).toBeUndefined();
    expect((await served('rb')).digest).toBe(digestOf(v3));
    expect(await entries()).toHaveLength(3);
    expect(await whichVersion(c, 'rb')).toBe('0.3.0');

    const one = await json<DeployAnswer>(await rollback('rb'), 200);
    expect(one).toMatchObject({ digest: digestOf(v2), version: '0.2.0' });
    expect(one.entry).toMatchObject({
      action: 'rollback',
      principal: 'deployer',
      replica: 'solo',
      from: { digest: digestOf(v3), version: '0.3.0' },
      to: { digest: digestOf(v2), version: '0.2.0' },
      forced: false,
      forced_past: [],
    });
    // Going back dropped c, which no caller used: reported, not refused.
    expect(one.entry!.reported).toEqual([expect.objectContaining({ code: 'tool-removed', tool: 'c', used: false })]);
    expect(await whichVersion(c, 'rb')).toBe('0.2.0');
    const listed = (await c.client.listTools()).tools.map((t) => t.name);
    expect(listed.filter((t) => t.startsWith('rb.')).sort()).toEqual(['rb.b', 'rb.which']);
    expect((await entries())[0]).toEqual(one.entry);

    // Served before v2 now: v3 (just replaced), then v1.
    const kept = await json<RetainedImages>(await as(token('reader'), at('/harnesses/rb/images')), 200);
    expect(kept.retained.map((r) => r.version)).toEqual(['0.3.0', '0.1.0']);
    const two = await json<DeployAnswer>(await rollback('rb', JSON.stringify({ steps: 2 })), 200);
    expect(two.entry).toMatchObject({ action: 'rollback', from: { version: '0.2.0' }, to: { digest: digestOf(v1), version: '0.1.0' } });
    expect(await whichVersion(c, 'rb')).toBe('0.1.0');

    // Sent as JSON says it is, as a client would: the body is read the same.
    const to = await json<DeployAnswer>(
      await as(token('deployer'), at('/harnesses/rb/rollback'), {
        method: 'POST',
        body: JSON.stringify({ to: digestOf(v3) }),
        headers: { 'content-type': 'application/json' },
      }),
      200,
    );
    expect(to.entry).toMatchObject({ action: 'rollback', from: { version: '0.1.0' }, to: { digest: digestOf(v3), version: '0.3.0' } });
    expect(await whichVersion(c, 'rb')).toBe('0.3.0');
    expect((await served('rb')).tools.sort()).toEqual(['b', 'c', 'which']);
    expect((await entries()).map((e) => [e.action, e.to?.version])).toEqual([
      ['rollback', '0.3.0'],
      ['rollback', '0.1.0'],
      ['rollback', '0.2.0'],
      ['deploy', '0.3.0'],
      ['deploy', '0.2.0'],
      ['deploy', '0.1.0'],
    ]);
  });

  it('refuses a rollback that breaks callers of what the served image added (409 breaks-callers) until forced', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0', ['added']);
    await deployAs('deployer', 'gated', v1);
    await deployAs('deployer', 'gated', v2);
    const c = await session('deployer');
    expect(valueOf((await c.client.callTool({ name: 'gated.added', arguments: { query: 'q' } })) as CallToolResult)).toEqual({
      query: 'q',
    });
    const before = (await json<HistoryPage>(await history('gated'), 200)).entries;

    for (const query of ['', '?dry-run=true']) {
      const refused = await refusal(await rollback('gated', undefined, query), 409);
      expect(refused).toMatchObject({
        code: 'breaks-callers',
        name: 'gated',
        breaks: [expect.objectContaining({ code: 'tool-removed', tool: 'added', used: true })],
      });
      expect(refused.message).toMatch(
        /^rolling gated back would break its callers of what the image it serves added: 1 break in tool added/,
      );
      expect(refused.message).toContain('force=true');
    }
    expect((await served('gated')).digest).toBe(digestOf(v2));
    expect((await json<HistoryPage>(await history('gated'), 200)).entries).toEqual(before);

    const forced = await json<DeployAnswer>(await rollback('gated', undefined, '?force=true', 'forcer'), 200);
    expect(forced.entry).toMatchObject({
      action: 'rollback',
      principal: 'forcer',
      forced: true,
      forced_past: [expect.objectContaining({ code: 'tool-removed', tool: 'added', used: true })],
      to: { digest: digestOf(v1) },
    });
    expect(await whichVersion(c, 'gated')).toBe('0.1.0');
  });

  it('refuses bad bodies (400 bad-request, saying what), a digest it keeps no image of (404 not-retained) and the served one (409 already-serving)', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0');
    await deployAs('deployer', 'bodies', v1);
    await deployAs('deployer', 'bodies', v2);
    const entries = async (): Promise<number> => (await json<HistoryPage>(await history('bodies'), 200)).entries.length;
    const send = 'send {"to": "sha256:..."}, {"steps": N}, or nothing for one step';
    const notDigest = "the rollback body's to is not a digest (sha256: and 64 hex digits, as berm history shows)";
    const notSteps = "the rollback body's steps is not a whole number from 1 to 1001: how many images back, 1 being the one served before";
    for (const [body, says] of [
      ['{"to": ', `the rollback body is not JSON: ${send}`],
      ['"sha256"', `the rollback body is not a JSON object: ${send}`],
      ['[1]', `the rollback body is not a JSON object: ${send}`],
      [JSON.stringify({ to: digestOf(v1), steps: 1 }), 'the rollback body gives both to and steps; give one'],
      [JSON.stringify({ steps: 0 }), notSteps],
      [JSON.stringify({ steps: 1.5 }), notSteps],
      [JSON.stringify({ steps: '1' }), notSteps],
      [JSON.stringify({ steps: 1002 }), notSteps],
      [JSON.stringify({ digest: digestOf(v1) }), 'the rollback body has an unknown member digest; it takes to or steps'],
      [JSON.stringify({ to: 'latest' }), notDigest],
      [JSON.stringify({ to: digestOf(v1).toUpperCase() }), notDigest],
      [JSON.stringify({ to: 1 }), notDigest],
    ]) {
      const error = await refusal(await rollback('bodies', body), 400);
      expect([body, error.code, error.message]).toEqual([body, 'bad-request', says]);
    }
    expect(await entries()).toBe(2);

    const none = await refusal(await rollback('bodies', JSON.stringify({ to: NO_IMAGE })), 404);
    expect(none).toMatchObject({ code: 'not-retained', name: 'bodies', retained: [digestOf(v1)] });
    expect(none.message).toContain(NO_IMAGE);
    const far = await refusal(await rollback('bodies', JSON.stringify({ steps: 3 })), 404);
    expect(far).toMatchObject({ code: 'not-retained', retained: [digestOf(v1)] });
    expect(far.message).toContain('fewer than 3');
    const same = await refusal(await rollback('bodies', JSON.stringify({ to: digestOf(v2) })), 409);
    expect(same).toMatchObject({ code: 'already-serving', name: 'bodies', digest: digestOf(v2) });
    expect((await refusal(await rollback('bodies-never'), 404)).code).toBe('not-retained');
    expect((await refusal(await rollback('no.dots'), 400)).code).toBe('bad-name');
    expect((await refusal(await rollback('bodies', undefined, '?steps=2'), 400)).message).toBe(
      'unknown query parameter steps; POST /harnesses/{name}/rollback takes force, dry-run',
    );
    expect((await served('bodies')).digest).toBe(digestOf(v2));
    expect(await entries()).toBe(2);
  });

  it('undoes an undeploy: GET /undeployed lists it with what it served, a rollback answers 201 and serves it again, and it is listed no more', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0');
    await deployAs('deployer', 'undone', v1);
    await deployAs('deployer', 'undone', v2);
    await undeployAs('forcer', 'undone');
    const undeployed = async (): Promise<UndeployedHarness[]> =>
      (await json<{ harnesses: UndeployedHarness[] }>(await as(token('reader'), at('/undeployed')), 200)).harnesses;
    const [undeploy] = (await json<HistoryPage>(await history('undone', '?limit=1'), 200)).entries;
    expect((await undeployed()).find((h) => h.name === 'undone')).toEqual({
      name: 'undone',
      undeployed_at: undeploy!.at,
      undeployed_by: 'forcer',
      last: { digest: digestOf(v2), version: '0.2.0' },
    });
    expect(await json<RetainedImages>(await as(token('reader'), at('/harnesses/undone/images')), 200)).toMatchObject({
      current: null,
      retained: [{ digest: digestOf(v2) }, { digest: digestOf(v1) }],
    });
    expect((await as(token('reader'), at('/harnesses/undone'))).status).toBe(404);

    // A dry run answers as the undo would, and brings nothing back.
    const dry = await json<DeployAnswer>(await rollback('undone', undefined, '?dry-run=true'), 201);
    expect([dry.dry_run, dry.digest, dry.entry]).toEqual([true, digestOf(v2), undefined]);
    expect((await as(token('reader'), at('/harnesses/undone'))).status).toBe(404);
    expect((await undeployed()).map((h) => h.name)).toContain('undone');

    const back = await json<DeployAnswer>(await rollback('undone'), 201);
    expect(back.digest).toBe(digestOf(v2));
    expect(back.entry).toMatchObject({
      action: 'rollback',
      principal: 'deployer',
      from: null,
      to: { digest: digestOf(v2), version: '0.2.0' },
    });
    expect((await served('undone')).digest).toBe(digestOf(v2));
    const c = await session('deployer');
    expect(await whichVersion(c, 'undone')).toBe('0.2.0');
    expect((await undeployed()).map((h) => h.name)).not.toContain('undone');
    // What it served before its undeploy is still kept; the image it serves again is no longer among the kept.
    expect(await json<RetainedImages>(await as(token('reader'), at('/harnesses/undone/images')), 200)).toMatchObject({
      current: { digest: digestOf(v2), version: '0.2.0' },
      retained: [{ digest: digestOf(v1), version: '0.1.0' }],
    });
    expect((await json<HistoryPage>(await history('undone'), 200)).entries.map((e) => e.action)).toEqual([
      'rollback',
      'undeploy',
      'deploy',
      'deploy',
    ]);
  });

  it('scopes: berm:read reads the history, images and undeployed names (which need it) and is refused a rollback naming berm:deploy; berm:deploy without berm:force is refused ?force=true naming berm:force; no token is 401', async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0');
    await deployAs('deployer', 'scoped', v1);
    await deployAs('deployer', 'scoped', v2);
    const reads = ['/harnesses/scoped/history', '/harnesses/scoped/images', `/harnesses/scoped/images/${digestOf(v1)}`, '/undeployed'];
    for (const p of reads) expect([p, (await as(token('reader'), at(p))).status]).toEqual([p, 200]);
    for (const p of reads) {
      const error = await refusal(await as(token('caller'), at(p)), 403);
      expect([p, error.code, error.scope]).toEqual([p, 'insufficient-scope', 'berm:read']);
    }

    const entries = async (): Promise<number> => (await json<HistoryPage>(await history('scoped'), 200)).entries.length;
    for (const [who, query, scope] of [
      ['reader', '', 'berm:deploy'],
      ['reader', '?dry-run=true', 'berm:deploy'],
      ['deployer', '?force=true', 'berm:force'],
      ['deployer', '?force=true&dry-run=true', 'berm:force'],
    ] as const) {
      const res = await rollback('scoped', JSON.stringify({ to: digestOf(v1) }), query, who);
      expect(res.headers.get('www-authenticate'), `${who} ${query}`).toContain(`scope="`);
      const error = await refusal(res, 403);
      expect([who, query, error.code, error.scope]).toEqual([who, query, 'insufficient-scope', scope]);
      expect(error.message).toBe(`${who} does not hold the scope ${scope} this request needs`);
    }
    expect((await served('scoped')).digest).toBe(digestOf(v2));
    expect(await entries()).toBe(2);

    for (const [method, p] of [
      ['GET', '/harnesses/scoped/history'],
      ['GET', '/harnesses/scoped/images'],
      ['GET', `/harnesses/scoped/images/${digestOf(v1)}`],
      ['GET', '/undeployed'],
      ['POST', '/harnesses/scoped/rollback'],
    ]) {
      const res = await as(undefined, at(p), { method });
      expect([method, p, res.status]).toEqual([method, p, 401]);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect((await errorOf(res)).code).toBe('unauthorized');
    }
    expect((await served('scoped')).digest).toBe(digestOf(v2));
    // With the scopes it needs, the same rollback passes.
    expect((await json<DeployAnswer>(await rollback('scoped', JSON.stringify({ to: digestOf(v1) })), 200)).entry?.principal).toBe(
      'deployer',
    );
  });
});

describePostgres('the deploy history API of two replicas on one PostgreSQL database', { timeout: 120_000 }, () => {
  let db: string;
  let a: RunningDaemon;
  let b: RunningDaemon;

  beforeAll(async () => {
    db = await createDatabase();
    // Started at once, as replicas are; each names itself.
    [a, b] = await Promise.all(
      ['alpha', 'beta'].map((name) => startDaemon({ store: db, args: [...NO_RECONCILIATION, '--replica-name', name] })),
    );
  });
  afterAll(async () => {
    await stopAll([a, b].filter((d) => d !== undefined));
    if (db !== undefined) await dropDatabase(db);
  });

  const history = async (d: RunningDaemon, name: string, query = ''): Promise<HistoryPage> =>
    json(await fetch(`${d.url}/harnesses/${name}/history${query}`), 200);
  const rollback = (d: RunningDaemon, name: string, body?: string): Promise<Response> =>
    fetch(`${d.url}/harnesses/${name}/rollback`, { method: 'POST', body });
  const deployThrough = async (d: RunningDaemon, name: string, bytes: Uint8Array): Promise<void> => {
    const res = await put(`${d.url}/harnesses/${name}`, bytes);
    expect([200, 201], await res.clone().text()).toContain(res.status);
    await res.body?.cancel();
  };
  /** Bounded: until `d` serves `digest` under `name`, which it learns from the database's notification. */
  const serving = (d: RunningDaemon, name: string, digest: string): Promise<true> =>
    until(`${name} at ${digest} on ${d.url}`, async () => ((await detail(d, name))?.digest === digest ? true : undefined));

  it("a deploy through A, one through B and a rollback through B: A's history has all three with their replicas, and A serves the rolled-back image", async () => {
    const v1 = await versioned('0.1.0');
    const v2 = await versioned('0.2.0', ['b']);
    await deployThrough(a, 'shared', v1);
    await deployThrough(b, 'shared', v2);
    const back = await json<DeployAnswer>(await rollback(b, 'shared'), 200);
    expect(back.entry).toMatchObject({ action: 'rollback', replica: 'beta', from: { digest: digestOf(v2) }, to: { digest: digestOf(v1) } });

    const page = await history(a, 'shared');
    expect(page.entries.map((e) => [e.action, e.replica, e.principal, e.from?.version ?? null, e.to?.version ?? null])).toEqual([
      ['rollback', 'beta', 'anonymous', '0.2.0', '0.1.0'],
      ['deploy', 'beta', 'anonymous', '0.1.0', '0.2.0'],
      ['deploy', 'alpha', 'anonymous', null, '0.1.0'],
    ]);
    expect(page.entries[0]).toEqual(back.entry);
    // Both read one history: B's is A's.
    expect(await history(b, 'shared')).toEqual(page);
    // A page's cursor from one replica reads the next page on the other.
    const first = await history(a, 'shared', '?limit=2');
    expect(first.entries).toEqual(page.entries.slice(0, 2));
    expect((await history(b, 'shared', `?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`)).entries).toEqual(
      page.entries.slice(2),
    );

    await serving(a, 'shared', digestOf(v1));
    const c = await connect(a.url);
    try {
      const which = valueOf((await c.client.callTool({ name: 'shared.which', arguments: { query: '?' } })) as CallToolResult);
      expect(which).toEqual({ query: '0.1.0' });
    } finally {
      await c.close();
    }
    const kept = await json<RetainedImages>(await fetch(`${a.url}/harnesses/shared/images`), 200);
    expect(kept).toMatchObject({
      current: { digest: digestOf(v1), version: '0.1.0' },
      retained: [{ digest: digestOf(v2), version: '0.2.0' }],
    });
    const bytes = await fetch(`${a.url}/harnesses/shared/images/${digestOf(v2)}`);
    expect(bytes.headers.get('content-type')).toBe('application/wasm');
    expect(Buffer.from(await bytes.arrayBuffer()).equals(Buffer.from(v2))).toBe(true);
  });

  it('two rollbacks at once through A and B are serialised: the second goes from where the first left the name', async () => {
    const images = await Promise.all(['0.1.0', '0.2.0', '0.3.0'].map((v) => versioned(v)));
    for (const bytes of images) await deployThrough(a, 'raced', bytes);
    await serving(b, 'raced', digestOf(images[2]!));
    // The test holds the name's lock, so both rollbacks are under way and waiting on it at once.
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS.name, 'raced']);
      const answers = [rollback(a, 'raced'), rollback(b, 'raced')];
      await until('both rollbacks waiting on the lock', async () => {
        const [row] = await sql<{ n: number }>(
          db,
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        );
        return row!.n === 2 ? true : undefined;
      });
      await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS.name, 'raced']);
      const [fromA, fromB] = await Promise.all(answers.map(async (r) => (await json<DeployAnswer>(await r, 200)).entry!));
      expect([fromA!.replica, fromB!.replica]).toEqual(['alpha', 'beta']);
      // Whichever went first went from 0.3.0 back to 0.2.0; the second from 0.2.0 back to 0.3.0, the image served before it.
      const [first, second] = fromA!.from?.version === '0.3.0' ? [fromA!, fromB!] : [fromB!, fromA!];
      expect([first.from?.version, first.to?.version]).toEqual(['0.3.0', '0.2.0']);
      expect(second.from).toEqual(first.to);
      expect(second.to?.version).toBe('0.3.0');
      const page = await history(a, 'raced', '?limit=2');
      expect(page.entries).toEqual([second, first]);
      for (const d of [a, b]) await serving(d, 'raced', second.to!.digest);
    } finally {
      await holder.end();
    }
  });

  it('GET /undeployed lists the names undeployed, newest undeploy first, on either replica; an undo through one is served by the other', async () => {
    const v1 = await versioned('0.1.0');
    for (const name of ['gone-a', 'gone-b']) await deployThrough(a, name, v1);
    for (const [d, name] of [
      [a, 'gone-a'],
      [b, 'gone-b'],
    ] as const) {
      const res = await fetch(`${d.url}/harnesses/${name}`, { method: 'DELETE' });
      expect(res.status).toBe(204);
    }
    const undeployed = async (d: RunningDaemon): Promise<UndeployedHarness[]> =>
      (await json<{ harnesses: UndeployedHarness[] }>(await fetch(`${d.url}/undeployed`), 200)).harnesses;
    const listed = await undeployed(a);
    expect(listed.map((h) => [h.name, h.undeployed_by, h.last])).toEqual([
      ['gone-b', 'anonymous', { digest: digestOf(v1), version: '0.1.0' }],
      ['gone-a', 'anonymous', { digest: digestOf(v1), version: '0.1.0' }],
    ]);
    expect(Date.parse(listed[0]!.undeployed_at)).toBeGreaterThanOrEqual(Date.parse(listed[1]!.undeployed_at));
    expect(await undeployed(b)).toEqual(listed);

    const undo = await rollback(b, 'gone-a');
    expect(undo.status).toBe(201);
    await undo.body?.cancel();
    await serving(a, 'gone-a', digestOf(v1));
    expect((await undeployed(a)).map((h) => h.name)).toEqual(['gone-b']);
    expect(await json<RetainedImages>(await fetch(`${a.url}/harnesses/gone-a/images`), 200)).toEqual({
      name: 'gone-a',
      current: { digest: digestOf(v1), version: '0.1.0' },
      retained: [],
    });
    expect((await history(a, 'gone-a')).entries.map((e) => [e.action, e.replica])).toEqual([
      ['rollback', 'beta'],
      ['undeploy', 'alpha'],
      ['deploy', 'alpha'],
    ]);
  });
});

describe("bermd's history flags", { timeout: 60_000 }, () => {
  /** Runs `bermd ARGS` to its end: its exit code and what it wrote. */
  async function bermd(...args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
    const run = await launchDaemon({ command: args });
    const code = await exited(run.process);
    return { code, stdout: run.stdout(), stderr: run.stderr() };
  }

  it('--help lists --keep-images, --history-retention and --replica-name with their defaults', async () => {
    const help = await bermd('--help');
    expect(help.code).toBe(0);
    const lines = help.stdout.split('\n');
    for (const [flag, shown] of [
      ['keep-images', 'default 5)'],
      ['history-retention', 'default 90d)'],
      ['replica-name', 'the host name and the process id'],
    ]) {
      const line = lines.find((l) => l.startsWith(`  --${flag} `));
      expect(line, `--${flag}`).toBeDefined();
      expect(line).toContain(shown);
    }
  });

  it("refuses a bad value at start (exit 2) in the setting's own words: a negative count, a retention below its least, a blank replica name", async () => {
    const dir = await tempDir('bermd-history-flags-');
    try {
      for (const [flag, text] of [
        ['keep-images', '-1'],
        ['keep-images', '1001'],
        ['history-retention', '10s'],
      ]) {
        const refused = readSettingText(settingByFlag(flag)!, `--${flag}`, text);
        expect(refused, `--${flag} ${text}`).toHaveProperty('refused');
        const run = await bermd('--listen', '127.0.0.1:0', '--state', dir, `--${flag}`, text);
        expect([flag, text, run.code]).toEqual([flag, text, 2]);
        expect(run.stderr).toContain(`bermd: ${(refused as { refused: string }).refused}\n`);
        expect(run.stdout).toBe('');
      }
      const blank = await bermd('--listen', '127.0.0.1:0', '--state', dir, '--replica-name', ' ');
      expect(blank.code).toBe(2);
      expect(blank.stderr).toContain('bermd: --replica-name " ": give a name that tells this bermd from its replicas');
    } finally {
      await removeDir(dir);
    }
  });
});
