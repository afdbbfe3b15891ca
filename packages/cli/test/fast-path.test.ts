// bin/run.js runs every command line src/fast-path.ts is sure of without loading oclif. That is a second
// reading of the command line beside oclif's, so it is held here to oclif's own: for every command of
// oclif.manifest.json, lines setting each argument and each flag (by name, `=`, char, alias, environment
// variable, repeated) are read both ways, and every line the fast path takes must be read by oclif's parser
// as the same command with the same args, flags, argv and JSON switch; every flag must be taken at least
// once, so that a new command or flag cannot slip by unread. The near misses it declines are listed, and a
// few command lines are run both ways through the real bin (oclif's way forced by `--`, which the fast path
// declines) to show the same output and exit status. Help and a mistyped command, which run no command, are
// held to oclif's in help-fast-path.test.ts.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from '@oclif/core/command';
import { Config } from '@oclif/core/config';
import { normalizeArgv } from '@oclif/core/help';
import { HARNESS_SETTINGS } from '@berm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_IDS } from '../dist/actions/index.js';
import { type CommandTable, type Reading, readCommandLine } from '../dist/fast-path.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { runCli } from './helpers/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const table: CommandTable = JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8'));
const BINS = ['crab', 'berm'];
/** The variables either reading looks at; each line sets its own. */
const READ_ENV = ['BERM_URL', 'BERM_TOKEN', 'CRAB_CONTENT_TYPE', 'BERM_CONTENT_TYPE'];

type Env = Record<string, string>;
type OclifReading = Omit<Reading, 'id'> & { id: string };

let config: Config;

beforeAll(async () => {
  config = await Config.load({ root });
});

/** oclif's reading of `argv` under `env`: the command main.run finds, and that command's own parse; undefined when it refuses. */
async function oclifReading(argv: string[], env: Env): Promise<OclifReading | undefined> {
  const [id, ...rest] = normalizeArgv(config, [...argv]);
  const found = config.findCommand(id ?? '');
  if (found === undefined) return undefined;
  const Cmd = (await found.load()) as unknown as new (argv: string[], config: Config) => Command;
  const probe = new Cmd(rest, config) as Command & {
    parse(c: unknown): Promise<{ args: Record<string, unknown>; flags: Record<string, unknown>; argv: unknown[] }>;
  };
  const saved = Object.fromEntries(READ_ENV.map((k) => [k, process.env[k]]));
  for (const k of READ_ENV) delete process.env[k];
  Object.assign(process.env, env);
  try {
    const { args, flags, argv: words } = await probe.parse(Cmd);
    return { id: found.id, args: args as Record<string, string>, flags, argv: words as string[], json: probe.jsonEnabled() };
  } catch {
    return undefined;
  } finally {
    for (const k of READ_ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

function fastReading(argv: string[], env: Env): Promise<Reading | undefined> {
  return readCommandLine(argv, () => table, { bins: BINS, env });
}

/** Values for a flag's text: plain words, and each kind of value a flag of crab's parses (integers, sizes, durations). */
const SAMPLES = ['some-value', '3', '16M', '2s', 'http://127.0.0.1:1'];

interface Line {
  argv: string[];
  env: Env;
  /** The flag the line is about, for the check that every flag is taken at least once. */
  flag?: string;
}

/** Lines for one command: its required arguments, then each optional argument, then each flag in each of its spellings. */
function linesOf(id: string): Line[] {
  const command = table.commands[id]!;
  const words = id.split(':');
  const argNames = Object.keys(command.args);
  const required = argNames.filter((n) => command.args[n]!.required).map((n) => `${n}-word`);
  const requiredFlags = Object.entries(command.flags)
    .filter(([, f]) => f.required)
    .flatMap(([name]) => [`--${name}`, `${name}-value`]);
  const common = [...words, ...required, ...requiredFlags];
  const lines: Line[] = [{ argv: common, env: {} }];
  // Every argument given, and for a command that takes as many words as it needs, more.
  const all = [...words, ...argNames.map((n) => `${n}-word`), ...requiredFlags];
  lines.push({ argv: all, env: {} });
  if (command.strict === false) lines.push({ argv: [...all, 'k=1', '{"a":1}', 'k=1'], env: {} });
  for (const [name, flag] of Object.entries(command.flags)) {
    // A required flag's own lines give it in place of the base's.
    const base = flag.required
      ? [...words, ...required, ...requiredFlags.filter((w) => w !== `--${name}` && w !== `${name}-value`)]
      : common;
    const spellings = [`--${name}`, ...(flag.aliases ?? []).map((a) => `--${a}`), ...(flag.char ? [`-${flag.char}`] : [])];
    if (flag.type === 'boolean') {
      for (const s of spellings) {
        lines.push({ argv: [...base, s], env: {}, flag: name });
        lines.push({ argv: [...words, s, ...base.slice(words.length)], env: {}, flag: name });
      }
      if (flag.allowNo) lines.push({ argv: [...base, `--no-${name}`], env: {}, flag: name });
      continue;
    }
    const values = flag.options ?? SAMPLES;
    for (const value of values) {
      for (const s of spellings) {
        lines.push({ argv: [...base, s, value], env: {}, flag: name });
        lines.push({ argv: [...words, s, value, ...base.slice(words.length)], env: {}, flag: name });
        if (s.startsWith('--')) lines.push({ argv: [...base, `${s}=${value}`], env: {}, flag: name });
      }
      if (flag.multiple) lines.push({ argv: [...base, `--${name}`, value, `--${name}`, `${value}-too`], env: {}, flag: name });
      if (flag.env) {
        lines.push({ argv: base, env: { [flag.env]: value }, flag: name });
        lines.push({ argv: [...base, `--${name}`, value], env: { [flag.env]: 'from-the-environment' }, flag: name });
      }
    }
  }
  if (command.flags.json) {
    lines.push({ argv: [...common, '--json'], env: {} });
    for (const key of ['CRAB_CONTENT_TYPE', 'BERM_CONTENT_TYPE'])
      for (const value of ['json', 'JSON', 'text']) lines.push({ argv: common, env: { [key]: value } });
  }
  return lines;
}

const OWN = Object.keys(table.commands).filter((id) => !id.startsWith('autocomplete'));

describe('the fast path of bin/run.js', () => {
  it('can run every command of the manifest but the autocomplete plugin topic, and nothing else', () => {
    expect([...COMMAND_IDS].sort()).toEqual(OWN.sort());
  });

  for (const id of OWN) {
    it(`reads ${id} as oclif does, and takes every one of its flags`, async () => {
      const taken = new Set<string>();
      for (const line of linesOf(id)) {
        const fast = await fastReading(line.argv, line.env);
        if (fast === undefined) continue;
        if (line.flag !== undefined) taken.add(line.flag);
        expect([line, fast]).toEqual([line, await oclifReading(line.argv, line.env)]);
      }
      expect([...taken].sort()).toEqual(Object.keys(table.commands[id]!.flags).sort());
    });
  }

  it('takes a command with every argument and its required flags', async () => {
    for (const id of OWN) expect([id, (await fastReading(linesOf(id)[0]!.argv, {}))?.id]).toEqual([id, id]);
  });

  it('reads the limits of deploy and run by their rows, as bermd reads them', async () => {
    for (const row of HARNESS_SETTINGS) {
      const text = row.kind === 'duration' ? '1500ms' : row.kind === 'size' ? '2M' : '4';
      const reading = await fastReading(['deploy', 'name', 'image', `--${row.flag}`, text], {});
      expect([row.flag, typeof reading?.flags[row.flag]]).toEqual([row.flag, 'number']);
    }
  });

  const DECLINED: [string[], Env?][] = [
    [['inspect', '--help', 'app.wasm']],
    [['inspect', 'app.wasm', '-h']],
    [['inspect', '--', 'app.wasm']],
    [['inspect', '--json', 'app.wasm', '--']],
    [['inspect', '-', '--json']],
    [['inspct', 'app.wasm']],
    [['Inspect', 'app.wasm']],
    [['--json', 'inspect', 'app.wasm']],
    [['--help']],
    [[]],
    [['inspect']],
    [['inspect', 'app.wasm', 'other.wasm']],
    [['inspect', '--json=true', 'app.wasm']],
    [['inspect', '-j', 'app.wasm']],
    [['breaks', 'a', 'b', '--format', 'yaml']],
    [['breaks', 'a', 'b', '--format', 'json', '--format', 'text']],
    [['pull', 'ref', '-ofile.wasm']],
    [['pull', 'ref', '-o=file.wasm']],
    [['pull', 'ref', '-o']],
    [['history', 'name', '--limit', '0']],
    [['history', 'name', '--limit', 'ten']],
    [['receipts', 'name', '--limit', '1001']],
    [['rollback', 'name', '--steps', '-1']],
    [['rollback', 'name', '--to', 'abcd', '--steps', '2']],
    [['deploy', 'name', 'image', '--max-memory', 'lots']],
    [['deploy', 'name', 'image', '--call-timeout', '-']],
    [['deploy', 'name', '--grant', 'none', 'image']],
    [['deploy', 'name', 'image', '--grant', 'none', '--force', 'extra']],
    [['registry', 'login', 'ghcr.io']],
    [['registry', 'login', 'ghcr.io', '-u']],
    [['registry']],
    [['registry', 'nothing']],
    [['registry:logout', 'ghcr.io']],
    [['autocomplete']],
    [['autocomplete', 'bash']],
    [['autocomplete', 'fish']],
    [['ls', '--url']],
    [['ls', '--url=']],
    [['ls', '--url', '']],
    [['ls', '--url', '--json']],
    [['ls', '--url', 'http://a', '--url', 'http://b']],
    [['ls', '--force']],
    [['ls', '--no-json']],
    [['ls', 'extra']],
    [['ls', '-x']],
    [['build', '--optimize=false']],
    [['build', 'a', 'b']],
    [['call', '-']],
    [['call', 'echo.echo', '-5']],
    [['run', 'app.wasm', 'tool', '--program', 'a=b.wasm', 'text=hi']],
    [['dev', '--json']],
    [['mcp', '--json']],
    [['ls', '--version']],
  ];

  it('declines the near misses, which go through oclif', async () => {
    for (const [argv, env = {}] of DECLINED) expect([argv, await fastReading(argv, env)]).toEqual([argv, undefined]);
  });

  it('leaves no optional argument for oclif to read from a piped stdin, so its default is what the fast path takes', async () => {
    for (const id of OWN) {
      const Cmd = (await config.findCommand(id)!.load()) as unknown as {
        args?: Record<string, { required?: boolean; ignoreStdin?: boolean }>;
      };
      for (const [name, arg] of Object.entries(Cmd.args ?? {}))
        if (!arg.required) expect([id, name, arg.ignoreStdin]).toEqual([id, name, true]);
    }
  });
});

describe('the same command lines through oclif', () => {
  const echo = 'examples/echo.wasm';
  let d: RunningDaemon;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await tempDir('berm-cli-fast-path-');
    d = await startDaemon({ stateDir });
  });

  afterAll(async () => {
    await d.stop();
    await removeDir(stateDir);
  });

  /** The line run as typed (the fast path) and with `--` added where it changes nothing for oclif but is declined. */
  async function bothWays(fast: string[], throughOclif: string[], env: Record<string, string | undefined> = {}) {
    expect(await fastReading(fast, {})).toBeDefined();
    expect(await fastReading(throughOclif, {})).toBeUndefined();
    const options = { env: { BERM_URL: d.url, BERM_TOKEN: undefined, ...env } };
    const [a, b] = await Promise.all([runCli(fast, options), runCli(throughOclif, options)]);
    expect(a).toEqual(b);
    return a;
  }

  it('inspect prints the same manifest, human and JSON', async () => {
    expect((await bothWays(['inspect', '--json', echo], ['inspect', '--json', '--', echo])).code).toBe(0);
    expect((await bothWays(['inspect', echo], ['inspect', '--', echo])).stdout).toContain('echo');
  });

  it('a failure is the same line, JSON document and exit status', async () => {
    expect((await bothWays(['inspect', 'missing.wasm'], ['inspect', '--', 'missing.wasm'])).code).toBe(2);
    const json = await bothWays(['inspect', '--json', 'missing.wasm'], ['inspect', '--json', '--', 'missing.wasm']);
    expect(JSON.parse(json.stdout).error.code).toBe('file-not-found');
    expect((await bothWays(['undeploy', 'missing'], ['undeploy', '--', 'missing'])).code).toBe(1);
  });

  it('a command asking bermd answers the same, with --json or its content-type variable', async () => {
    await runCli(['deploy', 'echo', echo], { env: { BERM_URL: d.url, BERM_TOKEN: undefined } });
    const listed = await bothWays(['ls', '--json'], ['ls', '--json', '--']);
    expect(JSON.parse(listed.stdout).map((h: { name: string }) => h.name)).toEqual(['echo']);
    const variable = await bothWays(['ls'], ['ls', '--'], { CRAB_CONTENT_TYPE: 'json' });
    expect(JSON.parse(variable.stdout)).toEqual(JSON.parse(listed.stdout));
    const history = await bothWays(['history', 'echo', '--limit', '1', '--json'], ['history', 'echo', '--limit', '1', '--json', '--']);
    expect(JSON.parse(history.stdout)).toHaveLength(1);
  });

  it('--version prints what oclif prints, its config.userAgent', async () => {
    const r = await runCli(['--version']);
    expect(r).toEqual({ code: 0, stdout: `${config.userAgent}\n`, stderr: '' });
  });
});
