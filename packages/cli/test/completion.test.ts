// Shell completion (`crab autocomplete`, @oclif/plugin-autocomplete) and the did-you-mean of a mistyped
// command (src/hooks/command-not-found.ts), through the real command line. The commands and flags
// expected in the scripts are read from oclif.manifest.json, the list the CLI itself starts from.
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exitCodeFor } from '@berm/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestion } from '../dist/hooks/command-not-found.js';
import { repoRoot, runCli } from './helpers/cli.js';

const run = promisify(execFile);

interface ManifestCommand {
  hidden?: boolean;
  flags: Record<string, { hidden?: boolean }>;
}

const manifest = JSON.parse(await readFile(new URL('../oclif.manifest.json', import.meta.url), 'utf8')) as {
  commands: Record<string, ManifestCommand>;
};
const commands = Object.entries(manifest.commands).filter(([, c]) => !c.hidden);

let cache: string;
const env = () => ({ XDG_CACHE_HOME: cache });

beforeAll(async () => {
  cache = await mkdtemp(join(tmpdir(), 'berm-completion-'));
});

afterAll(async () => {
  await rm(cache, { recursive: true, force: true });
});

/** The function file `autocomplete SHELL` writes for `bin`, after checking the command succeeded. */
async function completionFile(bin: 'crab' | 'berm', shell: 'bash' | 'zsh'): Promise<string> {
  const made = await runCli(['autocomplete', shell], { bin, env: env() });
  expect([made.code, made.stderr]).toEqual([0, expect.any(String)]);
  const file = shell === 'bash' ? `functions/bash/${bin}.bash` : `functions/zsh/_${bin}`;
  return readFile(join(cache, 'berm', 'autocomplete', file), 'utf8');
}

/**
 * What bash offers for the last word of each of `lines`, in one bash that sourced the setup
 * `bin autocomplete script bash` prints; and the completions registered for crab and berm there.
 */
async function bashCompletes(bin: 'crab' | 'berm', lines: string[][]): Promise<{ registered: string[]; offered: string[][] }> {
  const script = await runCli(['autocomplete', 'script', 'bash'], { bin, env: env() });
  expect(script.code).toBe(0);
  const asks = lines.map(
    (words) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=()
fn=$(complete -p ${words[0]} | sed -E 's/.*-F ([^ ]+).*/\\1/')
"$fn" ${words[0]} "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
echo "offered: \${COMPREPLY[*]}"`,
  );
  const { stdout } = await run('bash', ['-c', [script.stdout, 'complete -p crab berm', ...asks].join('\n')], { cwd: repoRoot });
  const out = stdout.trim().split('\n');
  const offered = out.filter((l) => l.startsWith('offered:')).map((l) => l.slice('offered:'.length).trim().split(/\s+/).filter(Boolean));
  return { registered: out.filter((l) => l.startsWith('complete ')), offered };
}

describe('crab autocomplete', () => {
  it("writes a bash completion holding every command and each command's flags", async () => {
    const text = await completionFile('crab', 'bash');
    for (const [id, command] of commands) {
      const line = text.split('\n').find((l) => l.split(' ')[0] === id);
      expect([id, line]).toEqual([id, expect.any(String)]);
      for (const [flag, spec] of Object.entries(command.flags))
        if (!spec.hidden) expect([id, line]).toEqual([id, expect.stringContaining(`--${flag}`)]);
    }
  });

  it("writes a zsh completion holding every command and each command's flags, for both names", async () => {
    const text = await completionFile('crab', 'zsh');
    expect(text).toMatch(/^#compdef crab$/m);
    expect(text).toMatch(/^compdef berm=crab$/m);
    for (const [id, command] of commands) {
      expect(text).toContain(`"${id.split(':').at(-1)}`);
      for (const [flag, spec] of Object.entries(command.flags))
        if (!spec.hidden) expect([id, text]).toEqual([id, expect.stringContaining(`--${flag}`)]);
    }
  });

  it('registers a completion for crab and berm in a real bash, which completes a command and its flags', async () => {
    // Each name's setup, whichever name wrote the cache last, completes both.
    for (const bin of ['crab', 'berm'] as const) {
      await completionFile(bin, 'bash');
      for (const setupBy of ['crab', 'berm'] as const) {
        const { registered, offered } = await bashCompletes(setupBy, [
          [bin, 'insp'],
          [bin, 'deploy', '--dry'],
        ]);
        expect(registered).toEqual([expect.stringMatching(/^complete -F \S+ crab$/), expect.stringMatching(/^complete -F \S+ berm$/)]);
        expect(offered).toEqual([['inspect'], ['--dry-run']]);
      }
    }
  });
});

/** The fish binary; null when the machine has none. */
function findFish(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v fish'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const FISH = findFish();
if (FISH === null && process.env.BERM_REQUIRE_FISH === '1') throw new Error('BERM_REQUIRE_FISH=1, and there is no fish');
const describeFish = FISH === null ? describe.skip : describe;

describe('crab autocomplete fish', () => {
  it('says where the script goes, for both names', async () => {
    const told = await runCli(['autocomplete', 'fish'], { bin: 'berm', env: env() });
    expect(told.code).toBe(0);
    expect(told.stdout).toContain('berm autocomplete script fish > $__fish_config_dir/completions/berm.fish');
    expect(told.stdout).toContain('berm autocomplete script fish > $__fish_config_dir/completions/crab.fish');
  });

  it("prints a script completing every command and each command's flags, for both names", async () => {
    const script = await runCli(['autocomplete', 'script', 'fish'], { env: env() });
    expect(script.code).toBe(0);
    const lines = script.stdout.split('\n').map((l) => l.trim());
    expect(lines).toContain('for bin in crab berm');
    for (const [id, command] of commands) {
      const words = id.split(':');
      const at = words.length === 1 ? '__berm_at' : `'__berm_at ${words.slice(0, -1).join(' ')}'`;
      expect([id, lines.some((l) => l.startsWith(`complete -c $bin -n ${at} -a '${words.at(-1)}'`))]).toEqual([id, true]);
      for (const [flag, spec] of Object.entries(command.flags)) {
        if (spec.hidden) continue;
        const offered = lines.some(
          (l) => l.startsWith(`complete -c $bin -n '__berm_command_is ${words.join(' ')}`) && l.includes(` -l ${flag}`),
        );
        expect([id, flag, offered]).toEqual([id, flag, true]);
      }
    }
  });

  describeFish(`in a real fish${FISH === null ? ' (skipped: no fish on this machine)' : ''}`, () => {
    it('completes commands, topics, flags and their values for crab and berm, loaded from where the instructions put it', async () => {
      const home = join(cache, 'fish-home');
      const completions = join(home, 'fish', 'completions');
      await mkdir(completions, { recursive: true });
      for (const bin of ['crab', 'berm'] as const) {
        const script = await runCli(['autocomplete', 'script', 'fish'], { bin, env: env() });
        expect(script.code).toBe(0);
        await writeFile(join(completions, `${bin}.fish`), script.stdout);
      }
      const asks = ['crab ins', 'berm dep', 'crab deploy x --dry', 'berm registry lo', 'crab breaks --format m', 'berm autocomplete f'];
      // fish loads a command's completion file only for a command on PATH: the repository's bin/crab and bin/berm.
      const { stdout } = await run(FISH!, ['-c', asks.map((line) => `complete -C '${line}'; echo ---`).join('; ')], {
        cwd: repoRoot,
        env: { PATH: `${join(repoRoot, 'bin')}:${process.env.PATH}`, HOME: home, XDG_CONFIG_HOME: home, XDG_DATA_HOME: home },
      });
      const offered = stdout
        .split('---\n')
        .slice(0, asks.length)
        .map((block) =>
          block
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split('\t')[0]),
        );
      expect(offered).toEqual([['inspect'], ['deploy'], ['--dry-run'], ['login', 'logout'], ['markdown'], ['fish']]);
    });
  });
});

describe('a mistyped command', () => {
  it('says which command it was probably meant to be, and exits with the usage status', async () => {
    const typo = await runCli(['inspct', 'examples/echo.wasm']);
    expect(typo.stderr).toContain('did you mean inspect?');
    expect(typo.code).toBe(exitCodeFor('usage'));

    const topic = await runCli(['registry', 'lgin'], { bin: 'berm' });
    expect(topic.stderr).toMatch(/^berm: command registry lgin not found; did you mean registry login\?/);
    expect(topic.code).toBe(exitCodeFor('usage'));

    const json = await runCli(['deplyo', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'usage', message: expect.stringContaining('did you mean deploy?') } });
    expect([json.code, json.stderr]).toEqual([exitCodeFor('usage'), '']);
  });

  it('suggests a command of a plugin too, and nothing for a word far from every command', async () => {
    expect((await runCli(['autocomplet'])).stderr).toContain('did you mean autocomplete?');
    const far = await runCli(['frobnicate']);
    expect(far.stderr).not.toContain('did you mean');
    expect(far.code).toBe(exitCodeFor('usage'));
  });

  it('is matched to the nearest command within a third of its length', () => {
    const ids = ['inspect', 'ls', 'deploy', 'registry:login', 'registry:logout'];
    expect(suggestion('hsitory', [...ids, 'history'])).toBe('history');
    // oclif's id runs on into the arguments when topics are separated by spaces.
    expect(suggestion('inspct:app.wasm', ids)).toBe('inspect');
    expect(suggestion('registry:lgin:docker.io', ids)).toBe('registry:login');
    expect(suggestion('registry:logot', ids)).toBe('registry:logout');
    expect(suggestion('foo', ids)).toBeUndefined();
    expect(suggestion('l', ids)).toBe('ls');
    expect(suggestion('x', [])).toBeUndefined();
  });
});
