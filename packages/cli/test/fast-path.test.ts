// bin/run.js answers `inspect --json IMAGE` without loading oclif (src/fast-path.ts). That is a second
// reading of the command line, so it is held here to oclif's own: every command line the fast path takes,
// oclif reads as the inspect command with that IMAGE, --json on and no other flag; the near misses it
// declines are left to oclif. An oclif upgrade that reads these shapes differently fails this test.
import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core/config';
import { beforeAll, describe, expect, it } from 'vitest';
import type InspectCommand from '../dist/commands/inspect.js';
import { plainInspectJsonImage } from '../dist/fast-path.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Reading {
  command?: string;
  image?: string;
  json?: boolean;
  /** Flags other than --json that the command line set. */
  others?: string[];
  error?: string;
}

type Probe = InstanceType<typeof InspectCommand> & {
  parse(command: typeof InspectCommand): Promise<{ args: { image: string }; flags: Record<string, unknown> }>;
};

let config: Config;

beforeAll(async () => {
  // What oclif reads from the environment is not what this compares: the fast path ignores it.
  delete process.env.BERM_URL;
  config = await Config.load({ root });
});

/** How oclif reads `argv`: the command it finds, and that command's parse of the rest. */
async function oclifReading(argv: string[]): Promise<Reading> {
  const found = config.findCommand(argv[0] ?? '');
  if (found?.id !== 'inspect') return { command: found?.id };
  const Inspect = (await found.load()) as unknown as typeof InspectCommand;
  const probe = new Inspect(argv.slice(1), config) as Probe;
  try {
    const { args, flags } = await probe.parse(Inspect);
    const others = Object.entries(flags)
      .filter(([name, value]) => name !== 'json' && value !== undefined)
      .map(([name]) => name);
    return { command: 'inspect', image: args.image, json: probe.jsonEnabled(), others };
  } catch (e) {
    return { command: 'inspect', error: (e as Error).message };
  }
}

const TAKEN = [
  ['inspect', '--json', 'app.wasm'],
  ['inspect', 'app.wasm', '--json'],
  ['inspect', '--json', 'dir with spaces/app.wasm'],
  ['inspect', '--json', '=app.wasm'],
  ['inspect', '--json', 'inspect'],
];

const DECLINED = [
  ['inspect', '--json', '-x'],
  ['inspect', '--json', '--'],
  ['inspect', '-j', 'app.wasm'],
  ['inspect', '--json=true', 'app.wasm'],
  ['inspect', '--url', 'http://127.0.0.1:1', 'app.wasm'],
  ['inspect', '--json', 'app.wasm', 'extra'],
  ['inspect', 'app.wasm', 'other.wasm'],
  ['inspect', '--help', 'app.wasm'],
  ['inspect', 'app.wasm'],
  ['Inspect', '--json', 'app.wasm'],
  ['breaks', '--json', 'app.wasm'],
  ['--json', 'inspect', 'app.wasm'],
];

describe('the fast path of bin/run.js', () => {
  it('takes the shapes it was made for', () => {
    for (const argv of TAKEN)
      expect([argv, plainInspectJsonImage(argv)]).toEqual([argv, argv.find((a) => a !== 'inspect' && a !== '--json') ?? 'inspect']);
  });

  it('declines the near misses, which go through oclif', () => {
    for (const argv of DECLINED) expect([argv, plainInspectJsonImage(argv)]).toEqual([argv, undefined]);
  });

  it('takes only command lines oclif reads as inspect IMAGE with --json and nothing else', async () => {
    for (const argv of [...TAKEN, ...DECLINED]) {
      const image = plainInspectJsonImage(argv);
      if (image === undefined) continue;
      expect([argv, await oclifReading(argv)]).toEqual([argv, { command: 'inspect', image, json: true, others: [] }]);
    }
  });
});
