// From nothing to a deployed tool with nothing but npm: `crab new` writes an AssemblyScript harness,
// `crab build` compiles it, `crab deploy` sends it to a real bermd, and the official MCP SDK client
// lists and calls it. The weather and geo examples, built the same way, show berm.http.fetch with a
// secret, an event, and berm.call telling Refused from Failed; an edit from u32 to i32 is a break.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Manifest } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect, valueOf, textOf, type McpConnection } from '../../bermd/test/mcp-client.js';
import { RemoteHost } from '../../bermd/test/remote.js';
import { repoRoot, runCli, Scratch, type CliResult } from './helpers/cli.js';

const SECRET = 'weather-api-key-7f3a';
/** A test that runs `crab build`: a compile takes seconds, more on a machine running the other test files. */
const BUILDS = 180_000;
// A loopback address of its own for the stand-in api.example.com: the example's URL has no port, so
// the stand-in listens on port 80, where nothing else on 127.0.0.1 can be in its way.
const API_ADDRESS = `127.${20 + (process.pid % 200)}.${(process.pid >> 8) % 250}.${1 + (Date.now() % 250)}`;

/** The one JSON document a --json command prints. */
function json<T>(result: CliResult): T {
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as T;
}

function nodeTest(cwd: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--test', '--test-reporter=tap'], { cwd, encoding: 'utf8' }, (error, stdout) =>
      resolve({ code: error ? Number(error.code) : 0, stdout }),
    );
  });
}

let scratch: Scratch;
let project: string;
let daemon: RunningDaemon;
let api: RemoteHost;
let secretsDir: string;
let mcp: McpConnection;
const built: Record<string, { image: string; manifest: { tools: { name: string }[] } }> = {};

beforeAll(async () => {
  scratch = await Scratch.create();
  project = join(scratch.dir, 'hello');
  const created = await runCli(['new', 'hello', '--dir', project, '--json']);
  expect(json<{ files: string[] }>(created).files).toEqual([
    'package.json',
    'assembly/index.ts',
    'assembly/tsconfig.json',
    'test/hello.test.mjs',
    'README.md',
    '.gitignore',
  ]);
  // Three builds at once: the machine's cores, not one after the other.
  const [hello, geo, weather] = await Promise.all([
    runCli(['build', project, '--json']),
    runCli(['build', 'examples/geo', '--json']),
    runCli(['build', 'examples/weather', '--json']),
  ]);
  built.hello = json(hello);
  built.geo = json(geo);
  built.weather = json(weather);

  api = await RemoteHost.start({ address: API_ADDRESS, port: 80 });
  api.route('/v1/forecast', (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        days: [
          { high: 21.5, low: 12, rain: false },
          { high: 18, low: 11.25, rain: true },
          { high: 19, low: 10, rain: true },
        ],
      }),
    );
  });
  secretsDir = await tempDir('berm-secrets-');
  const secrets = join(secretsDir, 'secrets.json');
  await writeFile(secrets, JSON.stringify({ example: SECRET }), { mode: 0o600 });
  daemon = await startDaemon({
    args: ['--serve', 'berm.http.fetch', '--secrets', secrets, '--resolve', `api.example.com:80:${API_ADDRESS}`],
  });
  mcp = await connect(daemon.url);
  await mcp.client.setLoggingLevel('notice');
}, 300_000);

afterAll(async () => {
  await mcp?.close();
  await daemon?.stop();
  await api?.close();
  if (daemon) await removeDir(daemon.stateDir);
  if (secretsDir) await removeDir(secretsDir);
  await scratch?.remove();
});

describe('crab new', () => {
  it("writes a project whose test passes against the image crab build made, on bermd's runtime through @berm/guest/testing", async () => {
    expect(built.hello!.image).toBe(join(project, 'build', 'hello.wasm'));
    const manifest = Manifest.fromImage(new Uint8Array(await readFile(built.hello!.image))).toJSON();
    expect(manifest).toEqual(built.hello!.manifest);
    expect(manifest.tools.map((t) => t.name)).toEqual(['hello']);
    expect(manifest.events.map((e) => e.name)).toEqual(['greeted']);
    // What npm install would give the project's test, from this checkout rather than the registry.
    await mkdir(join(project, 'node_modules', '@berm'), { recursive: true });
    await symlink(join(repoRoot, 'packages', 'guest'), join(project, 'node_modules', '@berm', 'guest'), 'dir');
    const run = await nodeTest(project);
    expect(run.stdout).toMatch(/# pass 3\n# fail 0/);
    expect(run.code).toBe(0);
  });

  it('refuses a directory that is not empty, and a name that is not a harness name, with exit 2 and nothing written', async () => {
    const before = await readdir(project);
    const again = await runCli(['new', 'hello', '--dir', project]);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      `crab: ${project} is not empty (${before.length} entries); crab new writes only into a new or empty directory\n`,
    );
    expect(await readdir(project)).toEqual(before);
    const bad = await runCli(['new', 'Bad.Name', '--json'], { cwd: scratch.dir });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toEqual({ error: expect.objectContaining({ code: 'bad-name' }) });
    await expect(stat(join(scratch.dir, 'Bad.Name'))).rejects.toThrow();
  });
});

describe('crab build, then crab deploy to a real bermd and an MCP client', () => {
  it('refuses a directory without assembly/index.ts, with exit 2', async () => {
    const result = await runCli(['build', scratch.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `crab: ${join(scratch.dir, 'assembly/index.ts')} does not exist: a harness's entry is assembly/index.ts (crab new NAME writes a project)\n`,
    );
  });

  it(
    'prints the image path and a one-line summary',
    async () => {
      const again = await runCli(['build', project]);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(
        `${join(project, 'build', 'hello.wasm')}\nbuilt hello 0.1.0: 1 tool (hello), 1 event, ${Math.round((await stat(built.hello!.image)).size / 1024)} KiB (assemblyscript 0.28.20, json-as 1.6.0)\n`,
      );
    },
    BUILDS,
  );

  it('deploys, and the SDK client lists the tool with its schemas and calls it; the event arrives', async () => {
    const listed = mcp.toolsChanged.next();
    const deployed = await runCli(['deploy', 'hello', built.hello!.image, '--url', daemon.url]);
    expect(deployed.code).toBe(0);
    await listed;
    const { tools } = await mcp.client.listTools();
    const hello = tools.find((t) => t.name === 'hello.hello');
    expect(hello).toMatchObject({
      description: 'Greets someone by name.',
      inputSchema: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, excitement: { type: 'integer', minimum: 0, default: 1 } },
      },
      outputSchema: { type: 'object', title: 'Greeting' },
      annotations: { readOnlyHint: true },
    });
    const before = mcp.messages.received.length;
    const result = await mcp.client.callTool({ name: 'hello.hello', arguments: { name: 'Ada', excitement: 3 } });
    expect(valueOf(result as never)).toEqual({ message: 'Hello, Ada!!!', length: 13 });
    expect(mcp.messages.received.slice(before)).toEqual([
      { level: 'notice', logger: 'hello', data: { event: 'greeted', fields: { name: 'Ada' }, tool: 'hello' } },
    ]);

    const failed = await mcp.client.callTool({ name: 'hello.hello', arguments: { name: '' } });
    expect(failed.isError).toBe(true);
    expect(textOf(failed as never)).toContain('name is empty: say who to greet');
  });
});

describe('the weather example: berm.http.fetch with a secret, an event, and berm.call', () => {
  interface Forecast {
    city: string;
    located_by: string;
    days: unknown[];
    rainy_days: number;
  }

  it('with geo not deployed, its call is Refused and the forecast asks by name, sending the secret the host holds', async () => {
    expect((await runCli(['deploy', 'weather', built.weather!.image, '--url', daemon.url])).code).toBe(0);
    const seen = api.seen.length;
    const before = mcp.messages.received.length;
    const result = await mcp.client.callTool({ name: 'weather.forecast', arguments: { city: 'Paris' } });
    expect(valueOf(result as never)).toEqual({
      city: 'Paris',
      located_by: 'name',
      rainy_days: 2,
      days: [
        { high: 21.5, low: 12, rain: false },
        { high: 18, low: 11.25, rain: true },
        { high: 19, low: 10, rain: true },
      ],
    } satisfies Forecast);
    const request = api.seen[seen]!;
    expect(request.url).toBe('/v1/forecast?days=3&city=Paris');
    expect(request.headers.authorization).toBe(`Bearer ${SECRET}`);
    // The events, and the line the forecast logged when geo could not be asked, at the session's level.
    const arrived = mcp.messages.received.slice(before).map((m) => m.data as Record<string, unknown>);
    expect(arrived.filter((d) => 'event' in d)).toEqual([
      { event: 'rain_started', fields: { city: 'Paris', day: 1 }, tool: 'forecast' },
      { event: 'rain_started', fields: { city: 'Paris', day: 2 }, tool: 'forecast' },
    ]);
    expect(arrived.filter((d) => !('event' in d))).toEqual([
      { tool: 'forecast', level: 'notice', message: expect.stringMatching(/^geo is not reachable \(.+\); asking by name$/) },
    ]);
  });

  it('with geo deployed, the forecast uses its coordinates; an unknown place is geo Failing, and the forecast says so', async () => {
    expect((await runCli(['deploy', 'geo', built.geo!.image, '--url', daemon.url])).code).toBe(0);
    const seen = api.seen.length;
    const located = valueOf(
      (await mcp.client.callTool({ name: 'weather.forecast', arguments: { city: 'oslo', days: 1 } })) as never,
    ) as Forecast;
    expect(located).toMatchObject({ city: 'oslo', located_by: 'geo' });
    expect(api.seen[seen]!.url).toBe('/v1/forecast?days=1&lat=59.9139&lon=10.7522');

    const unknown = await mcp.client.callTool({ name: 'weather.forecast', arguments: { city: 'Atlantis' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown as never)).toContain('geo could not locate Atlantis: unknown place: Atlantis');
    expect(api.seen.length).toBe(seen + 1);
  });
});

describe('an edit that changes a result field from u32 to i32', () => {
  it(
    'builds, and crab breaks old new exits 1 with unsigned-became-signed',
    async () => {
      const old = join(scratch.dir, 'old.wasm');
      await copyFile(built.hello!.image, old);
      const index = join(project, 'assembly', 'index.ts');
      const source = await readFile(index, 'utf8');
      expect(source).toContain('  length: u32 = 0;');
      await writeFile(
        index,
        source.replace('  length: u32 = 0;', '  length: i32 = 0;').replace('<u32>greeting.message.length', 'greeting.message.length'),
      );
      expect((await runCli(['build', project])).code).toBe(0);
      const breaks = await runCli(['breaks', old, built.hello!.image, '--format', 'json']);
      expect(breaks.code).toBe(1);
      expect(JSON.parse(breaks.stdout)).toEqual([
        expect.objectContaining({ code: 'unsigned-became-signed', tool: 'hello', path: expect.stringContaining('length') }),
      ]);
    },
    BUILDS,
  );

  it(
    'a compile error is shown as the compiler gives it, with file, line and column, and exits 2',
    async () => {
      const index = join(project, 'assembly', 'index.ts');
      const source = await readFile(index, 'utf8');
      const broken = source.replace('greeting.message = "Hello, "', 'greeting.message = helloo');
      await writeFile(index, broken);
      const lines = broken.split('\n');
      const line = lines.findIndex((l) => l.includes('helloo')) + 1;
      const column = lines[line - 1]!.indexOf('helloo') + 1;
      const result = await runCli(['build', project]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("ERROR TS2304: Cannot find name 'helloo'.");
      expect(result.stderr).toContain(`└─ in assembly/index.ts(${line},${column})`);
      expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(`crab: ${join(project, 'assembly/index.ts')} did not build: 1 error`);
      const asJson = await runCli(['build', project, '--json']);
      expect(asJson.code).toBe(2);
      expect(JSON.parse(asJson.stdout).error).toMatchObject({
        code: 'build-error',
        diagnostics: [{ category: 'error', code: 2304, file: 'assembly/index.ts', line, column }],
      });
    },
    BUILDS,
  );
});
