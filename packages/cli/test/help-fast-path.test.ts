// bin/run.js answers help and a mistyped command without loading oclif's Config (src/fast-path/help.ts):
// at the widths and colours the build rendered (off a terminal at 80 columns, on one in colour at 40 to 200)
// with the text oclif's Help class printed then, elsewhere with that class run over oclif.help.json, and a
// mistyped command with the did-you-mean of crab's command_not_found hook. Each is held here to oclif's own answer to the same line: the real bin with `--` added, which the
// fast path leaves to oclif and which changes nothing oclif prints for these lines (the help's subject and
// the command's id stop before it). For every command and topic oclif's Config holds, under both names, at
// several widths, with colour, on a terminal (under util-linux's `script`); and the lines it must leave to
// oclif, in process.
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerWithoutCommand, type HelpTable, type PackageJson } from '../dist/fast-path.js';
import { type CliResult, repoRoot, runCli } from './helpers/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pjson: PackageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const table: HelpTable = JSON.parse(readFileSync(new URL('../oclif.help.json', import.meta.url), 'utf8'));
const BINS = ['crab', 'berm'] as const;
/** Each check runs two real processes; the tests that run many have this long, the machine being shared. */
const LONG = 600_000;
type Bin = (typeof BINS)[number];

let scratch: string;
let probe: string;
let runs = 0;
/** Every command id and topic of oclif's own Config, with the plugins, as words (`registry login`). */
let subjects: string[][];
/** oclif's userAgent, the root help's VERSION line. */
let userAgent: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'berm-help-'));
  // Which of oclif's modules a run loaded: its help module alone, or its Config (the whole of oclif's start).
  probe = join(scratch, 'probe.cjs');
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.HELP_PROBE_LOG,
      Object.keys(require.cache).filter((f) => f.includes('/@oclif/core/lib/')).map((f) => f.split('/@oclif/core/lib/')[1]).join('\\n')));`,
  );
  const config = await Config.load({ root });
  const ids = new Set([...config.commands.map((c) => c.id), ...config.topics.map((t) => t.name)]);
  subjects = [...ids].map((id) => id.split(':'));
  userAgent = config.userAgent;
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Way = 'built' | 'help' | 'oclif';

/** The line run through the real bin, and which way it was answered: a built text, oclif's Help alone, or oclif. */
async function run(args: string[], bin: Bin, env: Record<string, string> = {}): Promise<CliResult & { way: Way }> {
  const log = join(scratch, `probe-${runs++}.log`);
  const result = await runCli(args, { bin, env: { ...env, NODE_OPTIONS: `--require ${probe}`, HELP_PROBE_LOG: log } });
  const loaded = readFileSync(log, 'utf8').split('\n');
  const way: Way = loaded.includes('config/config.js') ? 'oclif' : loaded.includes('help/index.js') ? 'help' : 'built';
  return { ...result, way };
}

/** `line` as typed and with `--` added (oclif's), compared; resolves with the way the typed line took. */
async function same(line: string[], bin: Bin, env: Record<string, string> = {}, throughOclif = [...line, '--']): Promise<Way> {
  const [fast, oclif] = await Promise.all([run(line, bin, env), run(throughOclif, bin, env)]);
  expect(oclif.way).toBe('oclif');
  const { way, ...answer } = fast;
  const { way: _, ...expected } = oclif;
  expect([bin, line, env, answer]).toEqual([bin, line, env, expected]);
  return way;
}

/** Runs `checks` a few at a time, the machine being shared. */
async function inTurn(checks: (() => Promise<unknown>)[], at = 3): Promise<void> {
  for (let i = 0; i < checks.length; i += at) await Promise.all(checks.slice(i, i + at).map((check) => check()));
}

describe('help without oclif', { timeout: LONG }, () => {
  it('holds built texts for every command and topic of oclif and the root, off a terminal and at each width on one', () => {
    const expected = ['', ...subjects.map((words) => words.join(' '))].sort();
    const { own, all } = table.views;
    expect([...Object.keys(own.texts!), ...Object.keys(all.texts!)].sort()).toEqual(expected);
    const terminal = table.terminal!;
    expect([...Object.keys(terminal.index.own), ...Object.keys(terminal.index.all)].sort()).toEqual(expected);
    for (const texts of [...Object.values(terminal.index.own), ...Object.values(terminal.index.all)])
      expect(texts.at).toHaveLength(terminal.to - terminal.from + 1);
  });

  it("prints oclif's help off a terminal for every command and topic, from the built text", async () => {
    const checks = BINS.flatMap((bin) => [
      async () => expect(await same(['--help'], bin)).toBe('built'),
      async () => expect(await same([], bin, {}, ['--help', '--'])).toBe('built'),
      ...subjects.map((words) => async () => expect(await same([...words, '--help'], bin)).toBe('built')),
    ]);
    await inTurn(checks);
  });

  it("prints oclif's help at other widths and in colour, through oclif's Help class", async () => {
    // Each subject under each name at one of these, in turn, so each is met by every subject but one.
    const settings: Record<string, string>[] = [
      { OCLIF_COLUMNS: '40' },
      { OCLIF_COLUMNS: '120' },
      { OCLIF_COLUMNS: '100', FORCE_COLOR: '1' },
    ];
    const checks = BINS.flatMap((bin, b) =>
      [[] as string[], ...subjects].map((words, i) => async () => {
        expect(await same([...words, '--help'], bin, settings[(i + b) % settings.length])).toBe('help');
      }),
    );
    await inTurn(checks);
  });

  it('OCLIF_COLUMNS=80 is the built width; a width oclif does not read as a number is its default', async () => {
    expect(await same(['build', '--help'], 'crab', { OCLIF_COLUMNS: '80' })).toBe('built');
    expect(await same(['build', '--help'], 'crab', { OCLIF_COLUMNS: 'wide' })).toBe('built');
    expect(await same(['build', '--help'], 'crab', { OCLIF_COLUMNS: '0' })).toBe('built');
    expect(await same(['build', '--help'], 'crab', { FORCE_COLOR: '0' })).toBe('help');
  });

  it('answers a topic alone, and help asked in other shapes, as oclif does', async () => {
    expect(await same(['registry'], 'berm', {}, ['registry', '--help', '--'])).toBe('built');
    const lines = [
      ['--help', 'build'],
      ['inspect', 'app.wasm', '--help'],
      ['registry', 'login', 'ghcr.io', '--help', '-u', 'me'],
      ['--json', '--help'],
      ['build', '--help', '--help'],
      ['autocomplete', 'fish', '--help'],
      ['registry', '--json'],
    ];
    await inTurn(lines.map((line) => async () => expect(await same(line, 'crab')).not.toBe('oclif')));
    // A subject oclif finds nothing for is oclif's to refuse.
    expect(await same(['nothing', '--help'], 'crab')).toBe('oclif');
    expect(await same(['registry', 'nothing', '--help'], 'crab')).toBe('oclif');
  });

  it('leaves help to oclif where a theme file could colour it', async () => {
    const config = join(scratch, 'config');
    mkdirSync(join(config, 'berm'), { recursive: true });
    writeFileSync(join(config, 'berm', 'theme.json'), '{}');
    expect(await same(['build', '--help'], 'crab', { XDG_CONFIG_HOME: config })).toBe('oclif');
    expect(await same(['build', '--help'], 'crab', { XDG_CONFIG_HOME: config, CRAB_DISABLE_THEME: 'true' })).toBe('built');
  });
});

/** util-linux's `script`, which runs a command on a terminal of its own; absent elsewhere (BSD's differs). */
const SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ? 'script' : undefined;

describe.skipIf(SCRIPT === undefined)('help on a terminal', { timeout: LONG }, () => {
  // What colour and width are is the terminal's to say, as at a user's: not the CI run's (supports-color
  // takes `CI` and the CI services' own variables to mean no colour on a terminal, which oclif then shows
  // plain, and the fast path with it, through oclif's Help rather than a built text).
  const terminalEnv = { ...process.env };
  const ciSigns = ['CI', 'CI_NAME', 'GITHUB_ACTIONS', 'GITEA_ACTIONS', 'GITLAB_CI', 'CIRCLECI', 'TRAVIS', 'APPVEYOR', 'BUILDKITE', 'DRONE'];
  for (const name of ['FORCE_COLOR', 'NO_COLOR', 'OCLIF_COLUMNS', 'COLUMNS', 'TEAMCITY_VERSION', 'TF_BUILD', ...ciSigns])
    delete terminalEnv[name];

  /** `args` run on a terminal `columns` wide: what it showed, the exit status, and the way it was answered. */
  function onTerminal(
    args: string[],
    bin: Bin,
    columns: number,
    env: Record<string, string> = {},
  ): Promise<{ code: number; shown: string; way: Way }> {
    const log = join(scratch, `probe-${runs++}.log`);
    const line = [process.execPath, join(repoRoot, 'bin', bin), ...args].map((w) => `'${w}'`).join(' ');
    return new Promise((resolve, reject) => {
      execFile(
        SCRIPT!,
        ['-qec', `stty cols ${columns} rows 50; exec ${line}`, '/dev/null'],
        { cwd: repoRoot, env: { ...terminalEnv, ...env, NODE_OPTIONS: `--require ${probe}`, HELP_PROBE_LOG: log } },
        (error, stdout) => {
          if (error && typeof error.code !== 'number') return reject(error);
          const loaded = readFileSync(log, 'utf8').split('\n');
          const way: Way = loaded.includes('config/config.js') ? 'oclif' : loaded.includes('help/index.js') ? 'help' : 'built';
          resolve({ code: error ? (error.code as number) : 0, shown: stdout, way });
        },
      );
    });
  }

  /** The line on a terminal and through oclif on one alike; resolves with the way the line took and what it showed. */
  async function sameOnTerminal(args: string[], bin: Bin, columns: number, env: Record<string, string> = {}) {
    const through = args.length === 0 || !args.includes('--help') ? [...args, '--help', '--'] : [...args, '--'];
    const [fast, oclif] = await Promise.all([onTerminal(args, bin, columns, env), onTerminal(through, bin, columns, env)]);
    expect([args, oclif.way]).toEqual([args, 'oclif']);
    expect([args, columns, env, fast.code, fast.shown]).toEqual([args, columns, env, oclif.code, oclif.shown]);
    return fast;
  }

  it("shows oclif's help, in bold, at the terminal's width, from the built texts", async () => {
    const lines: [string[], Bin, number][] = [
      [['--help'], 'crab', 100],
      [[], 'berm', 60],
      [['build', '--help'], 'crab', 150],
      [['registry', 'login', '--help'], 'berm', 80],
      [['registry'], 'crab', 30],
      [['deploy', '--help'], 'crab', 45],
      [['autocomplete', '--help'], 'berm', 200],
    ];
    await inTurn(
      lines.map(([args, bin, columns]) => async () => {
        const fast = await sameOnTerminal(args, bin, columns);
        expect([args, fast.way]).toEqual([args, 'built']);
        expect(fast.shown).toContain('\u001b[1mUSAGE\u001b[22m');
      }),
      2,
    );
  });

  it("shows every command's and topic's help on a terminal as oclif does, under both names, at widths in turn", async () => {
    const widths = [40, 97, 163, 200, 71];
    const checks = BINS.flatMap((bin, b) =>
      [[] as string[], ...subjects].map((words, i) => async () => {
        const width = widths[(i + b) % widths.length]!;
        const fast = await sameOnTerminal([...words, '--help'], bin, width);
        // The root help's VERSION line, rendered unwrapped, would wrap at a narrow width: oclif's Help then runs.
        expect([words, fast.way]).toEqual([words, words.length === 0 && userAgent.length > width - 2 ? 'help' : 'built']);
      }),
    );
    await inTurn(checks, 2);
  });

  it("runs oclif's Help past the built widths, and shows the plain text where colour is off", async () => {
    expect((await sameOnTerminal(['build', '--help'], 'crab', 230)).way).toBe('help');
    // The root help's VERSION line wraps at 40 columns.
    expect((await sameOnTerminal(['--help'], 'crab', 39)).way).toBe('help');
    const plain = await sameOnTerminal(['build', '--help'], 'berm', 80, { NO_COLOR: '1' });
    expect([plain.way, plain.shown.includes('\u001b[')]).toEqual(['built', false]);
    expect((await sameOnTerminal(['build', '--help'], 'berm', 120, { NO_COLOR: '1' })).way).toBe('help');
    expect((await sameOnTerminal(['build', '--help'], 'crab', 100, { TERM: 'dumb' })).way).not.toBe('oclif');
  });
});

describe('a mistyped command without oclif', { timeout: LONG }, () => {
  /** Slips of each of crab's own commands: a letter dropped, two swapped. */
  function slips(): string[][] {
    return subjects
      .filter((words) => !words[0]!.startsWith('autocomplete'))
      .flatMap((words) => {
        const last = words.at(-1)!;
        const dropped = last.length > 2 ? last.slice(0, 1) + last.slice(2) : `${last}x`;
        const swapped = last.length > 2 ? last[1] + last[0] + last.slice(2) : `x${last}`;
        return [dropped, swapped].map((word) => [...words.slice(0, -1), word]);
      });
  }

  it('gives the did-you-mean, stream and exit status of oclif and the hook, for slips of every command', async () => {
    const checks = slips().map((line, i) => async () => {
      const typed = i % 2 === 0 ? line : [...line, 'app.wasm', '--json'];
      expect(await same(typed, BINS[Math.floor(i / 2) % 2]!)).toBe('built');
    });
    await inTurn(checks);
  });

  it('reads the id as oclif does: joined words, up to a flag, a name=value or a command taking arguments', async () => {
    const lines = [
      ['inspct'],
      ['inspct', 'app.wasm'],
      ['inspct', 'app.wasm', 'more', '-x', 'after'],
      ['inspct', 'x=1', 'y'],
      ['inspct', '', 'y'],
      ['deplyo', '--json'],
      ['frobnicate'],
      ['foo=bar', 'baz'],
      ['-h'],
      ['--json'],
      ['ls:x'],
      ['registry:lgin', 'x'],
      ['autocomplet'],
      ['Inspect'],
      ['registry', 'lgin'],
      ['registry', 'logot', 'ghcr.io'],
      ['registry', 'foo', 'bar'],
      ['ls', 'extra'],
      ['create', 'autocomplete', 'x'],
    ];
    for (const bin of BINS) await inTurn(lines.map((line) => async () => expect(await same(line, bin)).toBe('built')));
    // Lines whose id names a command: the command runs, through oclif where the fast path did not read it.
    await inTurn(
      [
        ['build', '-h'],
        ['create', 'autocomplete'],
        ['script', 'autocomplete', 'fish'],
        ['registry', 'login', 'ghcr.io'],
      ].map((line) => async () => expect(await same(line, 'crab')).toBe('oclif')),
    );
  });
});

describe('the lines help leaves to oclif', () => {
  /** answerWithoutCommand in this process: whether it answered, and that it wrote nothing when it did not. */
  async function answered(argv: string[], options: { pjson?: PackageJson; env?: Record<string, string>; table?: HelpTable } = {}) {
    let written = '';
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      written += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      const result = await answerWithoutCommand(argv, {
        pjson: options.pjson ?? { ...pjson, oclif: { ...pjson.oclif, bin: 'crab', binAliases: ['berm'] } },
        env: options.env ?? { HOME: scratch },
        table: () => ('table' in options ? options.table : table),
      });
      if (!result) expect([argv, written]).toEqual([argv, '']);
      return result;
    } finally {
      process.stdout.write = write;
    }
  }

  it('declines a command that runs, a line with --, --version, and what oclif reads otherwise', async () => {
    for (const argv of [
      ['inspect', 'app.wasm'],
      ['ls'],
      ['registry', 'login', 'ghcr.io'],
      ['registry:login'],
      ['create', 'autocomplete'],
      ['build', '-h'],
      ['build', '--help', '--'],
      ['--', '--help'],
      ['inspct', '--'],
      ['--version'],
      ['autocomplete'],
    ])
      expect([argv, await answered(argv)]).toEqual([argv, false]);
    expect(await answered(['build', '--help'])).toBe(true);
  });

  it('declines where oclif would read something the table does not hold', async () => {
    const oclif = { ...pjson.oclif, bin: 'crab', binAliases: ['berm'] };
    expect(await answered(['--help'], { table: undefined })).toBe(false);
    expect(await answered(['--help'], { pjson: { ...pjson, oclif: { ...oclif, helpClass: './help.js' } } })).toBe(false);
    expect(await answered(['--help'], { pjson: { ...pjson, oclif: { ...oclif, additionalHelpFlags: ['-h'] } } })).toBe(false);
    expect(await answered(['--help'], { pjson: { ...pjson, oclif: { ...oclif, theme: 'theme.json' } } })).toBe(false);
    expect(await answered(['inspct'], { pjson: { ...pjson, oclif: { ...oclif, hooks: {} } } })).toBe(false);
    const dynamic = structuredClone(table);
    for (const command of dynamic.commands) command.hasDynamicHelp = true;
    expect(await answered(['build', 'x', '--help'], { table: dynamic })).toBe(false);
    const config = join(scratch, 'themed');
    mkdirSync(join(config, 'berm'), { recursive: true });
    writeFileSync(join(config, 'berm', 'theme.json'), '{}');
    expect(await answered(['--help'], { env: { HOME: scratch, BERM_CONFIG_DIR: join(config, 'berm') } })).toBe(false);
    expect(await answered(['--help'], { env: { HOME: scratch, XDG_CONFIG_HOME: config } })).toBe(false);
  });
});
