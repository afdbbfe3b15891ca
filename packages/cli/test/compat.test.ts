// The compatibility gate through the real command line: `crab deploy` refused for breaking recent
// callers (exit 1, the breaks listed, a hint to --force), forced, and `crab breaks NAME NEW --url`
// comparing with what a real bermd holds. Past uses are written into the daemon's state directory
// before it starts, in the store's format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { closedPort, standIn } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { Scratch, runCli } from './helpers/cli.js';

const HOUR = 3600 * 1000;

let d: RunningDaemon;
let scratch: Scratch;
const files: Record<string, string> = {};
const usedAt = Date.now() - 2 * HOUR;

beforeAll(async () => {
  const stateDir = await tempDir('berm-cli-gate-');
  const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
  await seedHarness(stateDir, 'h', v1, { tools: { echo: usedAt } });
  await seedHarness(stateDir, 'w', v1, { tools: { echo: usedAt } });
  d = await startDaemon({ stateDir });
  scratch = await Scratch.create();
  files.v1 = await scratch.write('v1.wasm', v1);
  files.none = await scratch.write('none.wasm', await harnessImage(manifestWithTools([], { version: '0.2.0' })));
  files.echoOnly = await scratch.write('echo-only.wasm', await harnessImage(manifestWithTools(['echo'], { version: '0.2.0' })));
});

afterAll(async () => {
  await d.stop();
  await removeDir(d.stateDir);
  await scratch.remove();
});

const env = () => ({ BERM_URL: d.url, BERM_TOKEN: undefined });

async function digestOf(name: string): Promise<string> {
  const r = await runCli(['ls', '--json'], { env: env() });
  return (JSON.parse(r.stdout) as { name: string; digest: string }[]).find((h) => h.name === name)!.digest;
}

describe('crab deploy and the compatibility gate', { timeout: 120_000 }, () => {
  it('exits 1 on a refusal, lists the breaks with their last use, and points at --force', async () => {
    const before = await digestOf('h');
    const r = await runCli(['deploy', 'h', files.none!], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')).toEqual([
      'refused: callers used these in the last 30 days:',
      '  tool echo  (last used 2 hours ago)',
      '    tool-removed  tool `echo` was removed',
      '',
      '  1 breaking change in 1 tool',
      'also reported:',
      '  tool size  (never used)',
      '    tool-removed  tool `size` was removed',
      '',
      '  1 breaking change in 1 tool',
      '',
    ]);
    expect(r.stderr).toBe(
      `crab: cannot deploy '${files.none}' as h: 1 break of tools or events callers used in the last 30 days; deploy with --force to replace it anyway\n`,
    );
    expect(await digestOf('h')).toBe(before);
  });

  it('--dry-run is refused as the deploy would be, and forced says what it would replace; nothing changes', async () => {
    const before = await digestOf('h');
    let r = await runCli(['deploy', '--dry-run', 'h', files.none!], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('refused: callers used these in the last 30 days:');
    expect(r.stderr).toContain('deploy with --force to replace it anyway');

    r = await runCli(['deploy', '--dry-run', '--force', 'h', files.none!], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^would replace h 0\.2\.0 \([0-9a-f]{12}\) \(dry run: nothing stored\)$/);
    expect(r.stdout).toContain('tool-removed');

    r = await runCli(['deploy', '--dry-run', '--json', 'fresh', files.echoOnly!], { env: env() });
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ name: 'fresh', version: '0.2.0', dry_run: true, replaced: false, tools: ['echo'] });
    expect(answer.manifest.tools.map((t: { name: string }) => t.name)).toEqual(['echo']);

    expect(await digestOf('h')).toBe(before);
    const listed = await runCli(['ls', '--json'], { env: env() });
    expect(JSON.parse(listed.stdout).map((h: { name: string }) => h.name)).not.toContain('fresh');
  });

  it('with --json prints the refusal as one error document and nothing else', async () => {
    const r = await runCli(['deploy', '--json', 'h', files.none!], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({
      code: 'breaks-callers',
      status: 409,
      name: 'h',
      image: files.none,
      window_seconds: 30 * 24 * 3600,
      breaks: [{ code: 'tool-removed', tool: 'echo', last_used_at: new Date(usedAt).toISOString(), used: true }],
      reported: [{ code: 'tool-removed', tool: 'size', last_used_at: null, used: false }],
    });
    expect(error.message).toContain('--force');
  });

  it('deploys with --force and reports every break, marking those it was forced past', async () => {
    let r = await runCli(['deploy', '--force', 'h', files.none!], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^replaced h 0\.2\.0 \([0-9a-f]{12}\)$/);
    expect(lines.slice(3)).toEqual([
      'reported:',
      '  tool echo  (last used 2 hours ago; forced)',
      '    tool-removed  tool `echo` was removed',
      '  tool size  (never used)',
      '    tool-removed  tool `size` was removed',
      '',
      '  2 breaking changes in 2 tools',
      expect.stringMatching(/^history: deploy by anonymous via \S+ at \S+Z, from 0\.1\.0 \([0-9a-f]{12}\); forced past 1 break$/),
      '',
    ]);

    // Back to v1 (adding tools breaks nothing), then --json of a forced deploy is the daemon's answer.
    r = await runCli(['deploy', 'h', files.v1!], { env: env() });
    expect([r.code, r.stdout]).toEqual([0, expect.not.stringContaining('reported')]);
    r = await runCli(['deploy', '--json', '--force', 'h', files.none!], { env: env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).reported.map((b: { tool: string; used: boolean }) => [b.tool, b.used])).toEqual([
      ['echo', true],
      ['size', false],
    ]);
  });
});

describe('crab breaks NAME NEW with a daemon address', { timeout: 120_000 }, () => {
  it('compares NEW with the harness deployed as NAME', async () => {
    let r = await runCli(['breaks', 'w', files.echoOnly!, '--url', d.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('tool size\n  tool-removed  tool `size` was removed\n\n1 breaking change in 1 tool\n');

    r = await runCli(['breaks', '--format', 'github', 'w', files.none!], { env: env() });
    expect(r.code).toBe(1);
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('::')[1]),
    ).toEqual(['error title=tool-removed in tool echo', 'error title=tool-removed in tool size']);

    r = await runCli(['breaks', '--json', 'w', files.v1!], { env: env() });
    expect([r.code, JSON.parse(r.stdout)]).toEqual([0, []]);
  });

  it('reads a path that exists as a file, even when a harness has that name', async () => {
    await scratch.write('w', await harnessImage(manifestWithTools(['echo'])));
    const r = await runCli(['breaks', 'w', files.none!, '--url', d.url], { cwd: scratch.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('1 breaking change in 1 tool');
    expect(r.stdout).not.toContain('size');
  });

  it('exits 2 when NAME is neither a file nor deployed, and without an address says how to ask the daemon', async () => {
    let r = await runCli(['breaks', 'nobody', files.v1!, '--url', d.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`crab: 'nobody' is neither a file nor a harness deployed at ${d.url}\n`);
    r = await runCli(['breaks', '--json', 'nobody', files.v1!], { env: env() });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'harness-not-found', name: 'nobody', url: d.url });

    r = await runCli(['breaks', 'w', files.v1!]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("crab: cannot read 'w': no such file (to compare with the harness deployed as w, give --url or set BERM_URL)\n");

    // Not a harness name (a dot), so a file only, address or not.
    r = await runCli(['breaks', 'w.wasm', files.v1!], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("crab: cannot read 'w.wasm': no such file\n");
  });

  it('exits 3 when the daemon cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await runCli(['breaks', 'w', files.v1!, '--url', url]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`could not reach bermd at ${url}`);
  });
});

describe('exit codes of client and daemon failures, through the real binary', { timeout: 120_000 }, () => {
  it('bad-url, bad-name and image-too-large are bad input (2)', async () => {
    let r = await runCli(['ls', '--json', '--url', 'not a url'], { bin: 'berm' });
    expect([r.code, JSON.parse(r.stdout).error.code]).toEqual([2, 'bad-url']);
    r = await runCli(['undeploy', '--json', 'a.b'], { bin: 'berm', env: env() });
    expect([r.code, JSON.parse(r.stdout).error.code]).toEqual([2, 'bad-name']);

    const small = await startDaemon({ args: ['--max-image-size', '1K'] });
    try {
      const big = await scratch.write('big.wasm', await harnessImage(manifestWithTools(['echo']), { padBytes: 4096 }));
      r = await runCli(['deploy', '--json', 'big', big], { env: { BERM_URL: small.url } });
      expect([r.code, JSON.parse(r.stdout).error]).toEqual([2, expect.objectContaining({ code: 'image-too-large', status: 413 })]);
    } finally {
      await small.stop();
      await removeDir(small.stateDir);
    }
  });

  it("an answer that is not bermd's, or a connection cut mid-answer, is a daemon not reached (3)", async () => {
    const html = await standIn((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web page</html>'));
    const cut = await standIn((req) => req.socket.destroy());
    try {
      let r = await runCli(['ls', '--json', '--url', html.url], { bin: 'berm' });
      expect([r.code, JSON.parse(r.stdout).error.code]).toEqual([3, 'unexpected-response']);
      r = await runCli(['ls', '--url', cut.url], { bin: 'berm' });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^berm: the connection to bermd at .* failed during GET \/harnesses/);
    } finally {
      html.server.close();
      cut.server.close();
    }
  });
});
