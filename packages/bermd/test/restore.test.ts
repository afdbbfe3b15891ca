// A restart restores many harnesses at once (several read and compiled together), and compiles a
// restored harness's validators on its first call: a real bermd restarted on the state directory it
// deployed fifty harnesses into, one of them damaged on disk while it was stopped.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, deploy, type McpConnection } from './mcp-client.js';

const COUNT = 50;
const DAMAGED = 'h17';
const names = Array.from({ length: COUNT }, (_, i) => `h${i}`);

describe('a restart with many harnesses', () => {
  let stateDir: string;
  let d: RunningDaemon;
  let mcp: McpConnection;

  beforeAll(async () => {
    stateDir = await tempDir('bermd-restore-');
    const first = await startDaemon({ stateDir });
    const image = await harnessImage(sampleManifest());
    let next = 0;
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        for (let i = next++; i < COUNT; i = next++) await deploy(first.url, names[i]!, image);
      }),
    );
    expect(await first.stop()).toBe(0);
    // Cut short, the stored image no longer reads: this one harness cannot be restored.
    const damaged = path.join(stateDir, 'harnesses', `${DAMAGED}.wasm`);
    await writeFile(damaged, (await readFile(damaged)).subarray(0, 20));
    d = await startDaemon({ stateDir });
    mcp = await connect(d.url);
  });
  afterAll(async () => {
    await mcp?.close();
    await d?.stop();
    await removeDir(stateDir);
  });

  it('skips the one stored harness that no longer loads and restores every other', async () => {
    const skipped = d.log().filter((e) => e.msg === 'stored harness no longer loads; skipped');
    expect(skipped.map((e) => e.harness)).toEqual([DAMAGED]);
    const res = await fetch(`${d.url}/harnesses`);
    const listed = ((await res.json()) as Array<{ name: string }>).map((h) => h.name);
    expect(listed).toEqual(names.filter((n) => n !== DAMAGED).sort());
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(listed.map((n) => `${n}.echo`));
  });

  it("refuses bad arguments on a restored harness's first call, and checks its results as before", async () => {
    const refused = await mcp.client.callTool({ name: 'h3.echo', arguments: { query: 5 } });
    expect(refused).toMatchObject({ isError: true, _meta: { 'berm/error': { code: 'invalid-arguments', path: '/query' } } });
    const missing = await mcp.client.callTool({ name: 'h4.echo', arguments: {} });
    expect(missing).toMatchObject({ isError: true, _meta: { 'berm/error': { code: 'invalid-arguments', path: '/query' } } });
    const answered = await mcp.client.callTool({ name: 'h5.echo', arguments: { query: 'restored' } });
    expect(answered.isError).toBeFalsy();
    expect(answered.structuredContent).toEqual({ query: 'restored' });
  });
});
