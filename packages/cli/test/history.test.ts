// berm history and berm rollback against a real bermd, and the history entry crab deploy prints: the
// table and its JSON export, rollbacks by steps and by digest, one the gate refuses (a tool the newer image
// added was called through /mcp) and the same forced, a dry run that changes nothing, an undeploy undone, and
// the exit codes of what bermd refuses. One daemon for the file; each test has harness names of its own. A
// stand-in server answers what bermd never would: a cursor that pages forever, two kept digests alike.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { standIn } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect } from '../../bermd/test/mcp-client.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { Scratch, runCli } from './helpers/cli.js';

const REPLICA = 'cli-test-replica';
const ISO_SECOND = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

let d: RunningDaemon;
let scratch: Scratch;
const files: Record<string, string> = {};
const digests: Record<string, string> = {};
const images: Record<string, Uint8Array> = {};

interface Entry {
  action: string;
  at: string;
  principal: string | null;
  replica: string;
  from: { digest: string; version: string | null } | null;
  to: { digest: string; version: string | null } | null;
  forced: boolean;
  forced_past: { code: string; tool?: string }[];
}

beforeAll(async () => {
  const v1 = await harnessImage(manifestWithTools(['echo']));
  const v2 = await harnessImage(manifestWithTools(['echo', 'size'], { version: '0.2.0' }));
  const v3 = await harnessImage(manifestWithTools(['size'], { version: '0.3.0' }));
  // A harness stored as a bermd from before the deploy history stored it: served, with no entry.
  const stateDir = await tempDir('berm-cli-history-');
  await seedHarness(stateDir, 'older', v1);
  d = await startDaemon({ stateDir, args: ['--replica-name', REPLICA] });
  scratch = await Scratch.create();
  for (const [key, bytes] of Object.entries({ v1, v2, v3 })) {
    images[key] = bytes;
    files[key] = await scratch.write(`${key}.wasm`, bytes);
    digests[key] = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  }
});

afterAll(async () => {
  await d.stop();
  await removeDir(d.stateDir);
  await scratch.remove();
});

const env = () => ({ BERM_URL: d.url, BERM_TOKEN: undefined });
const short = (key: string): string => digests[key]!.slice('sha256:'.length, 'sha256:'.length + 12);

async function berm(args: string[], bin: 'berm' | 'crab' = 'berm') {
  return runCli(args, { bin, env: env() });
}

/** A deploy over HTTP, as any client makes one: the setting of a test, not what it tests. */
async function deploy(name: string, image: string): Promise<void> {
  const answer = await fetch(`${d.url}/harnesses/${name}`, { method: 'PUT', body: images[image] });
  expect([200, 201]).toContain(answer.status);
  await answer.arrayBuffer();
}

/** Every entry bermd keeps for `name`, newest first, read over HTTP as any client would. */
async function entriesOf(name: string): Promise<Entry[]> {
  const answer = await fetch(`${d.url}/harnesses/${name}/history?limit=500`);
  expect(answer.status).toBe(200);
  const page = (await answer.json()) as { entries: Entry[]; next_cursor: string | null };
  expect(page.next_cursor).toBeNull();
  return page.entries;
}

async function servedDigest(name: string): Promise<string | null> {
  const answer = await fetch(`${d.url}/harnesses/${name}`);
  if (answer.status === 404) return null;
  return ((await answer.json()) as { digest: string }).digest;
}

/** Calls `tool` of `harness` through bermd's MCP endpoint, which records the use the gate reads. */
async function call(harness: string, tool: string): Promise<void> {
  const c = await connect(d.url);
  try {
    const result = (await c.client.callTool({ name: `${harness}.${tool}`, arguments: { query: 'q' } })) as { isError?: boolean };
    expect(result.isError).toBeFalsy();
  } finally {
    await c.close();
  }
}

/** The table's rows as cells (columns are three spaces apart or more), without its header. */
function rows(stdout: string): string[][] {
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^WHEN\s+ACTION\s+BY\s+VIA\s+VERSION\s+DIGEST\s+FORCED PAST$/);
  return lines.slice(1).map((l) => l.split(/ {3,}/));
}

describe('crab deploy and berm history', { timeout: 120_000 }, () => {
  it('crab deploy prints the entry it made, and berm history lists deploys, a forced deploy and an undeploy newest first', async () => {
    let r = await berm(['deploy', 'table', files.v1!], 'crab');
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^history: deploy by anonymous via ${REPLICA} at \\S+Z$`));
    r = await berm(['deploy', 'table', files.v2!], 'crab');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`^history: deploy by anonymous via ${REPLICA} at \\S+Z, from 0\\.1\\.0 \\(${short('v1')}\\)$`),
    );
    // v3 drops echo, which a caller has just used: only a forced deploy goes through, and its line says so.
    await call('table', 'echo');
    r = await berm(['deploy', '--force', 'table', files.v3!], 'crab');
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/, from 0\.2\.0 \([0-9a-f]{12}\); forced past 1 break$/);
    r = await berm(['undeploy', 'table']);
    expect(r.code).toBe(0);

    r = await berm(['history', 'table']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const table = rows(r.stdout);
    const entries = await entriesOf('table');
    expect(table.map((row) => row[0])).toEqual(entries.map((e) => e.at.replace(/\.\d{3}Z$/, 'Z')));
    for (const row of table) expect(row[0]).toMatch(ISO_SECOND);
    expect(table.map((row) => row.slice(1))).toEqual([
      ['undeploy', 'anonymous', REPLICA, '0.3.0 → -', `${short('v3')} → -`, '-'],
      ['deploy (forced)', 'anonymous', REPLICA, '0.2.0 → 0.3.0', `${short('v2')} → ${short('v3')}`, 'tool-removed (tool echo)'],
      ['deploy', 'anonymous', REPLICA, '0.1.0 → 0.2.0', `${short('v1')} → ${short('v2')}`, '-'],
      ['deploy', 'anonymous', REPLICA, '- → 0.1.0', `- → ${short('v1')}`, '-'],
    ]);

    // crab's name for the same command, and --json: the entries as bermd answers them.
    r = await berm(['history', '--json', 'table'], 'crab');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(entries);
  });

  it('reads one page by --limit and says how to see the rest; --all follows the cursor to the end, as a table or as JSON', async () => {
    for (const file of ['v1', 'v2', 'v1', 'v2', 'v1']) await deploy('paged', file);
    const all = await entriesOf('paged');
    expect(all).toHaveLength(5);

    let r = await berm(['history', 'paged', '--limit', '2']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('older entries: berm history paged --all');
    expect(rows(lines.slice(0, -1).join('\n')).map((row) => row[0])).toEqual(all.slice(0, 2).map((e) => e.at.replace(/\.\d{3}Z$/, 'Z')));

    r = await berm(['history', 'paged', '--limit', '2', '--json']);
    expect(JSON.parse(r.stdout)).toEqual(all.slice(0, 2));

    // Three pages of two, joined: every entry, newest first, as one document.
    r = await berm(['history', 'paged', '--limit', '2', '--all', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(all);
    r = await berm(['history', 'paged', '--limit', '2', '--all']);
    expect(rows(r.stdout)).toHaveLength(5);
    expect(r.stdout).not.toContain('older entries');

    // A page beyond bermd's bound is bad input, in bermd's words.
    r = await berm(['history', 'paged', '--limit', '501']);
    expect([r.code, r.stderr]).toEqual([2, 'berm: query parameter limit takes a whole number of entries from 1 to 500\n']);
  });

  it('a name with no history is not found (exit 1), as helm history says of a release it does not know; a harness from before history says so (exit 0)', async () => {
    let r = await berm(['history', 'nobody']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `berm: no history of nobody at ${d.url}: no harness of that name was deployed there, or its undeploy is older than bermd's --history-retention\n`,
    );
    r = await berm(['history', '--json', 'nobody']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'not-found', name: 'nobody', status: 404 });

    r = await berm(['history', 'older']);
    expect([r.code, r.stdout]).toEqual([0, `older has no history at ${d.url}: it was deployed before bermd kept one\n`]);
    r = await berm(['history', '--json', 'older']);
    expect([r.code, JSON.parse(r.stdout)]).toEqual([0, []]);

    r = await berm(['history', 'a.b']);
    expect(r.code).toBe(2);
  });
});

describe('berm rollback', { timeout: 120_000 }, () => {
  it('goes back one image, forward by a digest as berm history shows it, and back by the full digest, each with its entry', async () => {
    await deploy('back', 'v1');
    await deploy('back', 'v2');

    let r = await berm(['rollback', 'back']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`rolled back back 0.1.0 (${short('v1')})`);
    expect(lines.slice(1, 3)).toEqual(['  tools:  echo', '  events: none']);
    expect(lines.at(-1)).toMatch(
      new RegExp(`^history: rollback by anonymous via ${REPLICA} at \\S+Z, from 0\\.2\\.0 \\(${short('v2')}\\)$`),
    );
    expect(await servedDigest('back')).toBe(digests.v1);

    r = await berm(['rollback', 'back', '--to', short('v2')]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`rolled back back 0.2.0 (${short('v2')})`);
    expect(await servedDigest('back')).toBe(digests.v2);

    r = await berm(['rollback', 'back', '--to', digests.v1!, '--json']);
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ name: 'back', digest: digests.v1, replaced: true });
    expect(answer.entry).toMatchObject({ action: 'rollback', from: { digest: digests.v2 }, to: { digest: digests.v1 }, forced: false });
    expect((await entriesOf('back'))[0]).toEqual(answer.entry);
    expect((await entriesOf('back')).map((e) => e.action)).toEqual(['rollback', 'rollback', 'rollback', 'deploy', 'deploy']);
  });

  it("exits 1 with bermd's words when it keeps no such image or already serves it, and 2 for --to with --steps", async () => {
    await deploy('kept', 'v1');
    await deploy('kept', 'v2');
    const before = await entriesOf('kept');

    let r = await berm(['rollback', 'kept', '--steps', '2']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^berm: cannot roll kept back: it keeps 1 image besides the one it serves, fewer than 2/);
    r = await berm(['rollback', 'kept', '--steps', '2', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'not-retained', status: 404, retained: [digests.v1] });

    r = await berm(['rollback', 'kept', '--to', short('v3')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`berm: cannot roll kept back: it keeps no image whose digest starts ${short('v3')} (it keeps ${short('v1')})\n`);
    r = await berm(['rollback', 'kept', '--to', digests.v3!, '--json']);
    expect([r.code, JSON.parse(r.stdout).error.code]).toEqual([1, 'not-retained']);

    r = await berm(['rollback', 'kept', '--to', digests.v2!]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`berm: kept already serves ${digests.v2}: there is nothing to roll back to\n`);

    r = await berm(['rollback', 'kept', '--to', short('v1'), '--steps', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--steps=1 cannot also be provided when using --to|--to=.* cannot also be provided when using --steps/);
    r = await berm(['rollback', 'kept', '--to', 'not-hex']);
    expect(r.code).toBe(2);

    expect(await entriesOf('kept')).toEqual(before);
    expect(await servedDigest('kept')).toBe(digests.v2);
  });

  it('is refused when going back breaks a tool callers used since (exit 1, the breaks listed, --force named); forced, it goes back and says so', async () => {
    await deploy('gated', 'v1');
    await deploy('gated', 'v2');
    // v2 added size; a caller uses it, so going back to v1 would break that caller.
    await call('gated', 'size');
    const before = await entriesOf('gated');

    let r = await berm(['rollback', 'gated']);
    expect(r.code).toBe(1);
    // How long ago the call was depends on the machine's pace: only that the use is there is asserted.
    expect(r.stdout.split('\n')).toEqual([
      'refused: callers used these in the last 30 days:',
      expect.stringMatching(/^ {2}tool size {2}\(last used (.+ ago|just now)\)$/),
      '    tool-removed  tool `size` was removed',
      '',
      '  1 breaking change in 1 tool',
      '',
    ]);
    expect(r.stderr).toBe(
      'berm: cannot roll gated back: 1 break of tools or events callers used in the last 30 days; roll back with --force to go back anyway\n',
    );
    r = await berm(['rollback', 'gated', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'breaks-callers',
      status: 409,
      breaks: [{ code: 'tool-removed', tool: 'size', used: true }],
    });
    r = await berm(['rollback', 'gated', '--dry-run']);
    expect(r.code).toBe(1);
    expect(await entriesOf('gated')).toEqual(before);
    expect(await servedDigest('gated')).toBe(digests.v2);

    r = await berm(['rollback', 'gated', '--force']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`rolled back gated 0.1.0 (${short('v1')})`);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}tool size {2}\(last used (.+ ago|just now); forced\)$/));
    expect(lines.at(-1)).toMatch(/, from 0\.2\.0 \([0-9a-f]{12}\); forced past 1 break$/);
    expect(await servedDigest('gated')).toBe(digests.v1);

    r = await berm(['history', 'gated', '--limit', '1']);
    expect(rows(r.stdout.trimEnd().split('\n').slice(0, -1).join('\n'))[0]!.slice(1)).toEqual([
      'rollback (forced)',
      'anonymous',
      REPLICA,
      '0.2.0 → 0.1.0',
      `${short('v2')} → ${short('v1')}`,
      'tool-removed (tool size)',
    ]);
  });

  it("--dry-run says what would happen and the gate's verdict, and changes nothing", async () => {
    await deploy('dry', 'v1');
    await deploy('dry', 'v2');
    const before = await entriesOf('dry');

    let r = await berm(['rollback', 'dry', '--dry-run']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`would roll back dry 0.1.0 (${short('v1')}) (dry run: nothing stored)`);
    // Going back drops size, which no caller used: reported, and no reason to refuse.
    expect(lines).toContain('  tool size  (never used)');
    expect(lines.at(-1)).toBe('gate: passes: 1 break, of nothing callers used lately');
    expect(r.stdout).not.toContain('history:');

    r = await berm(['rollback', 'dry', '--dry-run', '--json']);
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ name: 'dry', digest: digests.v1, dry_run: true, replaced: true });
    expect(answer.entry).toBeUndefined();

    expect(await entriesOf('dry')).toEqual(before);
    expect(await servedDigest('dry')).toBe(digests.v2);
  });

  it('undoes an undeploy: the history outlives it, and berm rollback NAME brings the harness back', async () => {
    await deploy('undone', 'v1');
    expect((await berm(['undeploy', 'undone'])).code).toBe(0);
    expect(await servedDigest('undone')).toBeNull();

    let r = await berm(['history', 'undone']);
    expect(r.code).toBe(0);
    expect(rows(r.stdout).map((row) => row[1])).toEqual(['undeploy', 'deploy']);

    r = await berm(['rollback', 'undone']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`brought back undone 0.1.0 (${short('v1')})`);
    expect(lines.at(-1)).toMatch(new RegExp(`^history: rollback by anonymous via ${REPLICA} at \\S+Z$`));
    expect(await servedDigest('undone')).toBe(digests.v1);
    expect((await entriesOf('undone')).map((e) => [e.action, e.from, e.to?.digest])).toEqual([
      ['rollback', null, digests.v1],
      ['undeploy', { digest: digests.v1, version: '0.1.0' }, undefined],
      ['deploy', null, digests.v1],
    ]);
  });
});

describe('against a server that answers what bermd would not', { timeout: 60_000 }, () => {
  it('--all stops at a cursor answered twice (exit 3), and --to refuses a start of two kept digests (exit 2)', async () => {
    const entry = { action: 'deploy', at: '2026-01-01T00:00:00.000Z', principal: null, replica: 'r', from: null, to: null };
    const kept = (n: string) => ({ digest: `sha256:abcd${n.repeat(60)}`, version: null, retained_at: entry.at, bindings: {} });
    const { server, url } = await standIn((req, res) => {
      req.resume();
      const path = new URL(req.url!, 'http://x').pathname;
      const body =
        path === '/harnesses/loop/history'
          ? { entries: [{ ...entry, forced: false, forced_past: [], reported: [], notices: [] }], next_cursor: 'again' }
          : { name: 'twins', current: null, retained: [kept('1'), kept('2')] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      let r = await runCli(['history', 'loop', '--all'], { bin: 'berm', env: { BERM_URL: url } });
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(`berm: bermd at ${url} gave the same history cursor for loop twice; the export stopped\n`);
      r = await runCli(['history', 'loop', '--json'], { bin: 'berm', env: { BERM_URL: url } });
      expect([r.code, JSON.parse(r.stdout)[0].principal]).toEqual([0, null]);

      r = await runCli(['rollback', 'twins', '--to', 'abcd'], { bin: 'berm', env: { BERM_URL: url } });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`berm: --to abcd names 2 images of twins: give more of the digest (abcd11111111, abcd22222222)\n`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
