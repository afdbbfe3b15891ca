// The closing summary line, from the reporter itself: a child vitest runs the suites under
// test/fixtures/summary-reporter with only that reporter, and the line it prints is read back.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const fixtures = (file: string): string => fileURLToPath(new URL(`./fixtures/summary-reporter/${file}`, import.meta.url));

/**
 * Runs the fixture suites whose file names contain one of `filters` (all of them when none), with
 * `config`; answers the exit code and the last line.
 */
function runFixtures(filters: string[] = [], config = fixtures('vitest.config.ts')): Promise<{ code: number; line: string }> {
  // This run's own variables would tell the child it is a worker of this one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'TEST'));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [vitest, 'run', '--config', config, ...filters], { cwd: root, env, encoding: 'utf8' }, (error, stdout) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, line: stdout.trimEnd().split('\n').at(-1)! });
    });
  });
}

describe('the summary line', { timeout: 120_000 }, () => {
  it('counts a suite whose beforeAll threw as failed, its tests as skipped, and the run fails', async () => {
    expect(await runFixtures(['suite-setup-throws', 'passes'])).toEqual({ code: 1, line: '1 passed, 1 failed, 2 skipped' });
  });

  it('counts a file that cannot be loaded, a file whose setup threw and an unhandled error as failures too', async () => {
    // passes and unhandled pass their tests; suite-setup-throws, top-level-setup, import-throws and the
    // rejection unhandled leaves are the four failures; three tests never ran.
    expect(await runFixtures()).toEqual({ code: 1, line: '2 passed, 4 failed, 3 skipped' });
  });

  it('counts a file that never ran, because the global setup threw, as failed', async () => {
    expect(await runFixtures(['passes'], fixtures('global-setup-fails.config.ts'))).toEqual({ code: 1, line: '0 passed, 1 failed' });
  });

  it('says 0 failed only of a run that passed', async () => {
    expect(await runFixtures(['passes'])).toEqual({ code: 0, line: '1 passed, 0 failed' });
  });
});
