// crab deploy, berm ls and berm undeploy with BERM_TOKEN against a real bermd started with --access: the
// deployer's name in berm ls, and a principal without the scope a command needs refused with a line that
// names the scope and the daemon, and the exit status exit-codes.ts gives insufficient-scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '@berm/cli';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { type AccessFile, writeAccess } from '../../bermd/test/access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { Scratch, runCli } from './helpers/cli.js';

let d: RunningDaemon;
let dir: string;
let access: AccessFile;
let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  dir = await tempDir('berm-cli-access-');
  access = await writeAccess(dir, [
    { name: 'reader', scopes: ['berm:read'] },
    { name: 'deployer', scopes: ['berm:read', 'berm:deploy'] },
    { name: 'caller', scopes: ['berm:call'] },
  ]);
  d = await startDaemon({ args: ['--access', access.file] });
  scratch = await Scratch.create();
  files.one = await scratch.write('one.wasm', await harnessImage(manifestWithTools(['echo'])));
  files.two = await scratch.write('two.wasm', await harnessImage(manifestWithTools(['echo', 'size'], { version: '0.2.0' })));
});

afterAll(async () => {
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  await removeDir(dir);
  await scratch?.remove();
});

const as = (name: string) => ({ env: { BERM_URL: d.url, BERM_TOKEN: access.tokens[name] } });
const refusal = (principal: string, scope: string): string =>
  `${principal} does not hold the scope ${scope} this request needs (bermd at ${d.url}): use a token whose principal holds ${scope} (BERM_TOKEN); bermd's operator gives the scopes\n`;

describe('the command line with a principal per token', { timeout: 120_000 }, () => {
  it('crab deploy as a principal with berm:deploy; berm ls names it in DEPLOYED BY, and --json carries deployed_by', async () => {
    expect((await runCli(['deploy', 'mine', files.one!], as('deployer'))).code).toBe(0);
    const table = await runCli(['ls'], { bin: 'berm', ...as('reader') });
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/ {3,}/));
    const column = header!.indexOf('DEPLOYED BY');
    expect(column).toBeGreaterThan(0);
    expect(rows.find((r) => r[0] === 'mine')?.[column]).toBe('deployer');
    const json = await runCli(['ls', '--json'], { bin: 'berm', ...as('reader') });
    const list = JSON.parse(json.stdout) as { name: string; deployed_by: string }[];
    expect(list.find((h) => h.name === 'mine')?.deployed_by).toBe('deployer');
  });

  it("a principal without the scope is refused: the line names it and the daemon, and the exit status is insufficient-scope's", async () => {
    const exit = exitCodeFor('insufficient-scope');
    expect((await runCli(['deploy', 'held', files.one!], as('deployer'))).code).toBe(0);

    const deploy = await runCli(['deploy', 'held', files.two!], as('reader'));
    expect([deploy.code, deploy.stderr]).toEqual([exit, `crab: ${refusal('reader', 'berm:deploy')}`]);
    const forced = await runCli(['deploy', '--force', 'held', files.two!], as('deployer'));
    expect([forced.code, forced.stderr]).toEqual([exit, `crab: ${refusal('deployer', 'berm:force')}`]);
    const undeploy = await runCli(['undeploy', 'held'], { bin: 'berm', ...as('reader') });
    expect([undeploy.code, undeploy.stderr]).toEqual([exit, `berm: ${refusal('reader', 'berm:deploy')}`]);
    const ls = await runCli(['ls'], { bin: 'berm', ...as('caller') });
    expect([ls.code, ls.stderr]).toEqual([exit, `berm: ${refusal('caller', 'berm:read')}`]);

    const json = await runCli(['deploy', '--json', 'held', files.two!], as('reader'));
    expect(json.code).toBe(exit);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'insufficient-scope',
        message: 'reader does not hold the scope berm:deploy this request needs',
        scope: 'berm:deploy',
        status: 403,
      },
    });
    // Nothing changed: the first image is still deployed.
    const list = JSON.parse((await runCli(['ls', '--json'], { bin: 'berm', ...as('reader') })).stdout) as {
      name: string;
      version: string;
    }[];
    expect(list.find((h) => h.name === 'held')?.version).toBe('0.1.0');
  });
});
