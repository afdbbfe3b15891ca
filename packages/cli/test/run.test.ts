// `crab run`: one tool of an image run by bermd's runtime in the command line, no daemon. Its limits are
// bermd's (a spinning guest stopped at the time limit), key=value arguments are typed by the tool's
// schema, host services are off unless --serve allows them (a secret put in a request to a local
// stand-in upstream, and never printed), berm.call reaches the images given with --program.
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteHost } from '../../bermd/test/remote.js';
import { httpImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessWat } from '../../../test/helpers/harness.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { repoRoot, runCli, Scratch, type CliResult } from './helpers/cli.js';

const SECRET = 'upstream-key-5c1e';
/** Each test runs the command line a few times, each a process of its own on a machine that may be busy. */
const CLI_TIMEOUT = 180_000;
const ECHO = join(repoRoot, 'examples', 'echo.wasm');

let scratch: Scratch;
let upstream: RemoteHost;
let relay: string;
let typed: string;
let fetcher: string;
let secrets: string;

function json<T = Record<string, unknown>>(result: CliResult): T {
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => {
  scratch = await Scratch.create();
  upstream = await RemoteHost.start();
  upstream.route('/v1/key', (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ seen: req.headers.authorization === `Bearer ${SECRET}` }));
  });
  relay = await scratch.write('relay.wasm', (await relayImage(['echo'])).bytes);
  fetcher = await scratch.write('fetcher.wasm', (await httpImage({ fetch: [`127.0.0.1:${upstream.port}`], secrets: ['upstream'] })).bytes);
  const manifest = sampleManifest({
    tools: [
      {
        name: 'echo',
        description: 'Answers its arguments.',
        arguments: {
          type: 'object',
          properties: {
            n: { type: 'integer' },
            x: { type: 'number' },
            on: { type: 'boolean' },
            list: { type: 'array' },
            obj: { type: 'object' },
            text: { type: 'string' },
            maybe: { type: ['string', 'null'] },
          },
        },
      },
    ],
  });
  typed = await scratch.write('typed.wasm', await buildImage(harnessWat(manifest), manifest));
  secrets = join(scratch.dir, 'secrets.json');
  await writeFile(secrets, JSON.stringify({ upstream: SECRET }), { mode: 0o600 });
}, 60_000);

afterAll(async () => {
  await upstream?.close();
  await scratch?.remove();
});

describe('crab run', { timeout: CLI_TIMEOUT }, () => {
  it('types key=value pairs by the schema: numbers, booleans and JSON where the field takes them, text otherwise', async () => {
    const result = await runCli([
      'run',
      typed,
      'echo',
      'n=3',
      'x=2.5',
      'on=true',
      'list=[1,"a"]',
      'obj={"k":1}',
      'text=42',
      'maybe=null',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const { content } = json<{ content: Array<{ text: string }> }>(result);
    expect(JSON.parse(content[0]!.text)).toEqual({ n: 3, x: 2.5, on: true, list: [1, 'a'], obj: { k: 1 }, text: '42', maybe: null });
  });

  it("leaves a value that is not of its field's type as text, for the validator to refuse in /mcp's words", async () => {
    const result = await runCli(['run', ECHO, 'echo', 'text=hi', 'times=2.5', '--json']);
    expect(json(result)).toEqual({
      error: { code: 'invalid-arguments', message: 'echo.echo: argument /times must be integer', path: '/times' },
    });
    expect(result.code).toBe(2);
    const notJson = await runCli(['run', typed, 'echo', 'obj=nope']);
    expect(notJson.stderr).toBe('crab: obj=nope: obj is object, and the value is not JSON; give it as JSON\n');
    expect(notJson.code).toBe(2);
  });

  it('stops a spinning guest at the time limit, as bermd does, and prints the result of one that answers', async () => {
    const spun = await runCli(['run', relay, 'spin', '--call-timeout', '250ms', '--json']);
    const { error } = json<{ error: { code: string; message: string } }>(spun);
    expect(error.code).toBe('timeout');
    expect(error.message).toMatch(stoppedAt('relay.spin', 250));
    expect(spun.code).toBe(1);
    const answered = await runCli(['run', ECHO, 'echo', 'text=hi']);
    expect(answered.stdout).toBe('{\n  "text": "hi"\n}\n');
    expect(answered.code).toBe(0);
  });

  it('refuses a limit flag bermd would refuse, with its words', async () => {
    const result = await runCli(['run', relay, 'spin', '--call-timeout', 'soon', '--json']);
    expect(json(result)).toEqual({ error: expect.objectContaining({ code: 'bad-limit' }) });
    expect(result.code).toBe(2);
  });

  it('serves berm.http.fetch only when asked, with the secret put in the request and never printed', async () => {
    const request = JSON.stringify({
      method: 'GET',
      url: `http://127.0.0.1:${upstream.port}/v1/key`,
      headers: { authorization: 'Bearer {secret:upstream}' },
    });
    const off = await runCli(['run', fetcher, 'fetch', request, '--json']);
    expect(off.code).toBe(0);
    const refused = JSON.parse(json<{ content: Array<{ text: string }> }>(off).content[0]!.text) as { refused: string };
    expect(refused.refused).toBe(
      'berm.http.fetch is not served: give --serve berm.http.fetch (and --secrets FILE for the secrets it names) to serve it',
    );
    expect(upstream.seen).toHaveLength(0);

    const on = await runCli(['run', fetcher, 'fetch', request, '--serve', 'berm.http.fetch', '--secrets', secrets, '--json']);
    expect(on.code).toBe(0);
    await upstream.received(1);
    expect(upstream.seen[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    const answer = JSON.parse(json<{ content: Array<{ text: string }> }>(on).content[0]!.text) as { ok: { body: string } };
    expect(JSON.parse(answer.ok.body)).toEqual({ seen: true });
    expect(on.stdout + on.stderr).not.toContain(SECRET);
  });

  it('reaches a program given with --program through berm.call, and is refused one it was not given', async () => {
    const request = '{"program": "echo", "tool": "echo", "args": {"text": "nested"}}';
    const given = await runCli(['run', relay, 'call', request, '--program', `echo=${ECHO}`, '--json']);
    expect(given.code).toBe(0);
    expect(JSON.parse(json<{ content: Array<{ text: string }> }>(given).content[0]!.text)).toEqual({ ok: { text: 'nested' } });
    const absent = await runCli(['run', relay, 'call', request, '--json']);
    expect(JSON.parse(json<{ content: Array<{ text: string }> }>(absent).content[0]!.text)).toEqual({
      refused: 'program "echo" is not deployed',
    });
  });

  it('refuses an image a deploy would refuse, naming it', async () => {
    const notWasm = await scratch.write('not.wasm', 'not a module');
    const result = await runCli(['run', notWasm, 'echo', '--json']);
    expect(json(result)).toEqual({ error: expect.objectContaining({ code: 'bad-image' }) });
    expect(json<{ error: { message: string } }>(result).error.message).toMatch(new RegExp(`^cannot run '${notWasm}': `));
    expect(result.code).toBe(2);
  });

  it('builds a project directory first, then runs its tool', async () => {
    const project = join(scratch.dir, 'greeter');
    expect((await runCli(['new', 'greeter', '--dir', project])).code).toBe(0);
    const result = await runCli(['run', project, 'hello', 'name=Ada', 'excitement=3', '--json']);
    expect(result.code).toBe(0);
    expect(json(result)).toEqual({
      result: { message: 'Hello, Ada!!!', length: 13 },
      content: [{ type: 'text', text: '{"message":"Hello, Ada!!!","length":13}' }],
      is_error: false,
      events: [{ harness: 'greeter', tool: 'hello', event: 'greeted', fields: { name: 'Ada' } }],
      logs: [],
    });
  }, 180_000);
});
