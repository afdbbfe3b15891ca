// Text a hostile image (or whatever answers at BERM_URL) controls never reaches the operator's terminal
// as escape sequences: every command, every format, stdout and stderr read as the raw bytes the process
// wrote. The image goes through a real bermd; a stand-in daemon answers what a real one no longer lets
// through (the reader refuses control characters in versions and names), since the command line
// trusts no answer either.
import type { Server, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData } from '@berm/manifest';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { standIn } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect } from '../../bermd/test/mcp-client.js';
import { Scratch, controlCharacters, runCliBytes, type RunOptions } from './helpers/cli.js';

const ESC = '\u001b';
const BEL = '\u0007';
const CSI = '\u009b';
/** The version the report tried: a colour change, a window title, a bell. */
const HOSTILE_VERSION = `1.0${ESC}[31mRED${ESC}]0;pwned${BEL}`;
/** A screen clear in a program name. */
const HOSTILE_PROGRAM = `x${ESC}[2Jy`;
/** Free text the reader takes as written: a schema's member name and an enum value (C1 this time). */
const HOSTILE_KEY = `q${CSI}1m${ESC}]0;pwned${BEL}`;
/** How the human views show it. */
const SHOWN_KEY = 'q\ufffd1m\u241b]0;pwned\u2407';
const HOSTILE_VALUE = `v${CSI}2J${ESC}[H`;
/** What must not arrive whole; crab's own styles are SGR sequences such as ESC[31m, so the hostile text is looked for with its context. */
const SEQUENCES = [HOSTILE_VERSION, HOSTILE_PROGRAM, HOSTILE_KEY, HOSTILE_VALUE, `${ESC}]0;`, `${ESC}[2J`, CSI, BEL];

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command, checks that neither stream carries a control character, and answers the text. */
async function inert(args: string[], options: RunOptions = {}): Promise<Output> {
  const r = await runCliBytes(args, options);
  const where = `${options.bin ?? 'crab'} ${args.join(' ')}`;
  expect(controlCharacters(r.stdout), `stdout of ${where}`).toEqual([]);
  expect(controlCharacters(r.stderr), `stderr of ${where}`).toEqual([]);
  // With colour forced on, crab's own styles are the only escape sequences written. (JSON, GitHub and
  // Markdown output is never coloured.)
  if (args.includes('--json') || args.some((a, i) => args[i - 1] === '--format' && a !== 'text')) return decoded(r);
  const coloured = await runCliBytes(args, { ...options, env: { ...options.env, FORCE_COLOR: '1' } });
  for (const bytes of [coloured.stdout, coloured.stderr]) {
    const text = bytes.toString('utf8');
    for (const sequence of SEQUENCES) expect(text, `${where} with colour`).not.toContain(sequence);
    expect(controlCharacters(Buffer.from(text.replace(/\u001b\[[0-9;]*m/g, ''))), `${where} with colour`).toEqual([]);
  }
  return decoded(r);
}

function decoded(r: { code: number; stdout: Buffer; stderr: Buffer }): Output {
  return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

/** A manifest whose echo tool takes `keys` in a closed object, each allowing `HOSTILE_VALUE` or `plain`. */
function withKeys(keys: string[], overrides: Partial<ManifestData> = {}): ManifestData {
  const base = sampleManifest(overrides);
  const properties = Object.fromEntries(keys.map((k) => [k, { enum: [HOSTILE_VALUE, 'plain'] }]));
  return { ...base, tools: [{ ...base.tools[0]!, arguments: { type: 'object', properties, additionalProperties: false } }] };
}

let scratch: Scratch;
beforeAll(async () => {
  scratch = await Scratch.create();
});
afterAll(async () => {
  await scratch?.remove();
});

describe('through a real bermd', { timeout: 120_000 }, () => {
  let d: RunningDaemon;
  const env = (): Record<string, string | undefined> => ({ BERM_URL: d.url, BERM_TOKEN: undefined });
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('crab deploy: an image with control characters in its version or a program name is refused, saying where; berm ls lists nothing', async () => {
    const version = await scratch.write('version.wasm', await harnessImage(sampleManifest({ version: HOSTILE_VERSION })));
    const program = await scratch.write(
      'program.wasm',
      await harnessImage(sampleManifest({ deps: { programs: [HOSTILE_PROGRAM], syscalls: {}, secrets: [] } })),
    );
    for (const [file, path] of [
      [version, '/version'],
      [program, '/deps/programs/0'],
    ] as const) {
      const r = await inert(['deploy', 'hostile', file], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        new RegExp(
          `^crab: cannot deploy '.*' as hostile: .*invalid manifest at ${path}: holds a control character \\(U\\+001B at index \\d\\)`,
        ),
      );
      const json = await inert(['deploy', '--json', 'hostile', file], { env: env() });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'bad-image', reason: 'invalid-manifest', path });
      // inspect reads the same image the same way.
      const inspect = await inert(['inspect', file]);
      expect(inspect.code).toBe(2);
      expect(inspect.stderr).toContain(`invalid manifest at ${path}: holds a control character`);
    }
    const ls = await inert(['ls'], { bin: 'berm', env: env() });
    expect(ls.stdout).toBe('no harnesses deployed\n');
  });

  it('crab deploy, berm ls, crab inspect, crab breaks and berm undeploy: schema text quoted by the answers arrives as pictures, and --json keeps it, escaped', async () => {
    const v1 = await scratch.write('v1.wasm', await harnessImage(withKeys(['query', HOSTILE_KEY], { description: `Looks fine${ESC}[2J` })));
    const v2 = await scratch.write('v2.wasm', await harnessImage(withKeys(['query'], { version: '0.2.0' })));
    let r = await inert(['deploy', 'h', v1], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^deployed h 0\.1\.0 /);

    // Nobody has called it yet: the deploy goes through, and the daemon reports the break, which quotes the key.
    r = await inert(['deploy', 'h', v2], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(SHOWN_KEY);
    await inert(['deploy', 'h', v1], { env: env() });
    const json = await inert(['deploy', '--json', 'h', v2], { env: env() });
    expect(json.code).toBe(0);
    // JSON escapes the characters, C1 included, and reads back as they were.
    expect(json.stdout).toContain('q\\u009b1m\\u001b]0;pwned\\u0007');
    const reported = (JSON.parse(json.stdout) as { reported: Array<{ path: string }> }).reported;
    expect(reported.map((b) => b.path)).toEqual([`/arguments/properties/${HOSTILE_KEY}`]);
    await inert(['deploy', 'h', v1], { env: env() });

    // Now a caller uses the tool, and the breaking deploy is refused with the breaks on stdout.
    const c = await connect(d.url);
    try {
      const called = (await c.client.callTool({ name: 'h.echo', arguments: { query: 'plain', [HOSTILE_KEY]: HOSTILE_VALUE } })) as {
        isError?: boolean;
      };
      expect(called.isError).toBeFalsy();
    } finally {
      await c.close();
    }
    r = await inert(['deploy', 'h', v2], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('refused: callers used these');
    expect(r.stdout).toContain(SHOWN_KEY);
    expect(r.stderr).toMatch(/^crab: cannot deploy '.*v2\.wasm' as h: 1 break of tools or events callers used/);
    const refused = await inert(['deploy', '--json', 'h', v2], { env: env() });
    const error = (JSON.parse(refused.stdout) as { error: { code: string; breaks: Array<{ path: string }> } }).error;
    expect(error.code).toBe('breaks-callers');
    expect(error.breaks.map((b) => b.path)).toEqual([`/arguments/properties/${HOSTILE_KEY}`]);
    // Forced, the break is reported instead.
    r = await inert(['deploy', '--force', 'h', v2], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('reported:');
    expect(r.stdout).toContain(SHOWN_KEY);

    // breaks against the deployed harness, in every format: the enum value names a C1 character.
    await inert(['deploy', 'h', v1], { env: env() });
    const narrowed = await scratch.write('narrowed.wasm', await harnessImage(narrowEnum()));
    for (const format of ['text', 'github', 'markdown', 'json']) {
      const b = await inert(['breaks', '--format', format, 'h', narrowed], { env: env() });
      expect(b.code, format).toBe(1);
      // The library quotes values as JSON (ESC as \u001b); the C1 character it leaves is the printer's to escape.
      if (format === 'json') expect((JSON.parse(b.stdout) as Array<{ message: string }>)[0]!.message).toContain(`"v${CSI}2J\\u001b[H"`);
      else expect(b.stdout, format).toContain('"v\ufffd2J\\u001b[H"');
    }

    // inspect marks nothing here, but shows the description as pictures.
    const inspect = await inert(['inspect', '--url', d.url, v1]);
    expect(inspect.stdout.split('\n')).toContain('Looks fine\u241b[2J');

    const ls = await inert(['ls'], { bin: 'berm', env: env() });
    expect(ls.stdout).toMatch(/^NAME/);
    const undeploy = await inert(['undeploy', 'h'], { bin: 'berm', env: env() });
    expect(undeploy.stdout).toBe('undeployed h\n');
    // A name that is not a harness name is refused before any request, quoted as JSON.
    const bad = await inert(['undeploy', `x${ESC}[2J`], { bin: 'berm', env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('x\\u001b[2J');
  });
});

/** v1's echo with the hostile enum value no longer allowed: a break whose message quotes it. */
function narrowEnum(): ManifestData {
  const m = withKeys(['query', HOSTILE_KEY]);
  const args = m.tools[0]!.arguments as { properties: Record<string, { enum: string[] }> };
  args.properties[HOSTILE_KEY] = { enum: ['plain'] };
  args.properties.query = { enum: ['plain'] };
  return m;
}

describe('from a daemon whose answers hold control characters', { timeout: 60_000 }, () => {
  let server: Server;
  let url: string;
  const summary = {
    name: 'h',
    digest: `sha256:${'ab'.repeat(32)}`,
    version: HOSTILE_VERSION,
    tools: [`echo${ESC}[2J`],
    events: [],
    deployed_at: `2026-01-01T00:00:00Z${ESC}]0;t${BEL}`,
    deployed_by: `alice${ESC}[2J`,
    last_used_at: `never${CSI}31m`,
    limits: { timeout: 10_000, max_memory: 64 * 1024 * 1024, max_result_size: 1024 * 1024 },
    grants: { syscalls: { [`berm.http.fetch${ESC}[1m`]: [`api.example.com${BEL}`] }, secrets: [`s${CSI}0m`] },
    bindings: {},
  };
  const gated = {
    code: `tool-removed${ESC}[5m`,
    tool: `echo${ESC}[2J`,
    path: `/x${BEL}`,
    message: `removed ${HOSTILE_VERSION}`,
    last_used_at: `soon${CSI}7m`,
    used: true,
  };

  /** A history entry whose every string an escape sequence rides in. */
  const entry = {
    action: `rollback${ESC}[1m`,
    at: `2026-01-01T00:00:00Z${ESC}[2J`,
    principal: `alice${ESC}[2J`,
    replica: `host${ESC}]0;t${BEL}/1`,
    from: { digest: `sha256:${'ab'.repeat(32)}`, version: HOSTILE_VERSION },
    to: { digest: `sha256:${CSI}2J${'cd'.repeat(31)}`, version: `2${CSI}0m` },
    forced: true,
    forced_past: [gated],
    reported: [gated],
    notices: [],
  };

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  beforeAll(async () => {
    ({ server, url } = await standIn((req, res) => {
      req.resume();
      const path = new URL(req.url!, 'http://x').pathname;
      if (req.method === 'GET' && path === '/harnesses') return send(res, 200, [summary]);
      if (req.method === 'PUT' && path === '/harnesses/fine') {
        const notice = { code: 'program-not-deployed', program: HOSTILE_PROGRAM, message: `program ${HOSTILE_PROGRAM} is not deployed` };
        return send(res, 201, { ...summary, name: 'fine', reported: [{ ...gated, used: false }], notices: [notice], replaced: false });
      }
      if (req.method === 'PUT' && path === '/harnesses/gated') {
        return send(res, 409, {
          error: {
            code: 'breaks-callers',
            message: `refused ${HOSTILE_VERSION}`,
            name: 'gated',
            window_seconds: 60,
            breaks: [gated],
            reported: [gated],
          },
        });
      }
      if (req.method === 'GET' && path === '/harnesses/h/history') return send(res, 200, { entries: [entry], next_cursor: null });
      if (req.method === 'POST' && path === '/harnesses/fine/rollback')
        return send(res, 200, { ...summary, name: 'fine', reported: [gated], notices: [], replaced: true, entry });
      if (req.method === 'POST' && path === '/harnesses/gated/rollback')
        return send(res, 409, {
          error: {
            code: 'breaks-callers',
            message: `refused ${HOSTILE_VERSION}`,
            name: 'gated',
            window_seconds: 60,
            breaks: [gated],
            reported: [],
          },
        });
      if (req.method === 'GET' && path === '/harnesses/h')
        return send(res, 200, { ...summary, manifest: sampleManifest({ description: `d${ESC}[2J` }), usage: {} });
      return send(res, 404, { error: { code: 'not-found', message: `no harness ${HOSTILE_PROGRAM}${CSI}2J here` } });
    }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('berm ls shows every cell as pictures, and --json escapes them', async () => {
    const env = { BERM_URL: url };
    const table = await inert(['ls'], { bin: 'berm', env });
    expect(table.stdout).toContain('1.0\u241b[31mRED\u241b]0;pwned\u2407');
    expect(table.stdout).toContain('echo\u241b[2J');
    expect(table.stdout).toContain('alice\u241b[2J');
    const json = await inert(['ls', '--json'], { bin: 'berm', env });
    expect(JSON.parse(json.stdout)).toEqual([summary]);
  });

  it('crab deploy shows the version, notices, reported breaks and a refusal as pictures', async () => {
    const image = await scratch.write('any.wasm', await harnessImage(sampleManifest()));
    const env = { BERM_URL: url };
    const done = await inert(['deploy', 'fine', image], { env });
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('deployed fine 1.0\u241b[31mRED\u241b]0;pwned\u2407');
    expect(done.stdout).toContain('notice: program x\u241b[2Jy is not deployed');
    expect(done.stdout).toContain('tool-removed\u241b[5m');
    const refused = await inert(['deploy', 'gated', image], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('tool echo\u241b[2J');
    expect(refused.stdout).toContain('/x\u2407');
    const json = await inert(['deploy', '--json', 'fine', image], { env });
    expect(JSON.parse(json.stdout).version).toBe(HOSTILE_VERSION);
  });

  it("berm undeploy, crab breaks NAME and crab inspect --url show the daemon's words as pictures", async () => {
    const env = { BERM_URL: url };
    const undeploy = await inert(['undeploy', 'gone'], { bin: 'berm', env });
    expect(undeploy.code).toBe(1);
    expect(undeploy.stderr).toContain('no harness x\u241b[2Jy\ufffd2J here');
    const next = await scratch.write('next.wasm', await harnessImage(sampleManifest({ tools: [] })));
    for (const format of ['text', 'github', 'markdown', 'json']) {
      const b = await inert(['breaks', '--format', format, 'h', next], { env });
      expect(b.code, format).toBe(1);
    }
    const caller = await scratch.write(
      'caller.wasm',
      await harnessImage(sampleManifest({ deps: { programs: ['weather'], syscalls: {}, secrets: [] } })),
    );
    const inspect = await inert(['inspect', '--url', url, caller]);
    expect(inspect.stdout).toContain('weather (not deployed)');
  });

  it('berm history and berm rollback show the entry, its versions, principal, replica and breaks as pictures', async () => {
    const env = { BERM_URL: url };
    const history = await inert(['history', 'h'], { bin: 'berm', env });
    expect(history.code).toBe(0);
    expect(history.stdout).toContain('2026-01-01T00:00:00Z\u241b[2J');
    expect(history.stdout).toContain('alice\u241b[2J');
    expect(history.stdout).toContain('host\u241b]0;t\u2407/1');
    expect(history.stdout).toContain('1.0\u241b[31mRED\u241b]0;pwned\u2407 → 2\ufffd0m');
    expect(history.stdout).toContain('tool-removed\u241b[5m (tool echo\u241b[2J)');
    const json = await inert(['history', '--json', 'h'], { bin: 'berm', env });
    expect(JSON.parse(json.stdout)).toEqual([entry]);

    const rollback = await inert(['rollback', 'fine'], { bin: 'berm', env });
    expect(rollback.code).toBe(0);
    expect(rollback.stdout).toContain('rolled back fine 1.0\u241b[31mRED\u241b]0;pwned\u2407');
    expect(rollback.stdout).toContain(
      'history: rollback\u241b[1m by alice\u241b[2J via host\u241b]0;t\u2407/1 at 2026-01-01T00:00:00Z\u241b[2J',
    );
    const refused = await inert(['rollback', 'gated'], { bin: 'berm', env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('tool echo\u241b[2J');
  });
});
