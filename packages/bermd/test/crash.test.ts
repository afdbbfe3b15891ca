// bermd killed with SIGKILL at each named step of a deploy, of an undeploy and of a usage write
// (BERMD_FAULT_AT, src/faults.ts: the process kills itself exactly there), then restarted: for every
// step the harness comes back as the step says it must (absent, the old one or the new one, each with
// its own bindings, never torn), its stored bytes match its digest, and nothing is left in the store.
import { createHash } from 'node:crypto';
import { cp, readFile, readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_STEPS, type FaultStep } from '../dist/faults.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { exited, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, put } from './mcp-client.js';

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

interface Version {
  bytes: Uint8Array;
  /** The deploy's query: its bindings. */
  query: string;
  /** The bindings it is stored and shown with. */
  bindings: Record<string, unknown>;
}

/** What a restart finds under the name: nothing, or an image with its bindings. */
type Outcome = null | { digest: string; bindings: Record<string, unknown> };

/** The deploy's steps, in the order a deploy reaches them (FAULT_STEPS lists them so); the image's rename is the commit point. */
const DEPLOY_STEPS: FaultStep[] = FAULT_STEPS.filter((s) => s.startsWith('deploy-') || s.startsWith('store-'));

/** The steps the undeploy and usage tests stop at. */
const UNDEPLOY_STEP: FaultStep = 'undeploy-image-removed';
const USAGE_STEP: FaultStep = 'usage-written';

/** Sends a request to `d` that the daemon dies during; resolves with the status if an answer came first. */
async function requestDuringWhichItDies(
  d: RunningDaemon,
  method: string,
  pathname: string,
  body?: Uint8Array,
): Promise<number | undefined> {
  const gone = exited(d.process);
  let answered: number | undefined;
  const req = httpRequest(`${d.url}${pathname}`, { method, agent: false, headers: { 'content-type': 'application/wasm' } });
  req.on('error', () => {}); // the connection dies with the daemon
  req.on('response', (res) => {
    answered = res.statusCode;
    res.resume();
  });
  req.end(body);
  expect(await gone).toBe('SIGKILL');
  req.destroy();
  return answered;
}

/** What a restarted daemon holds as `h`, checked whole: the listing agrees, the bytes match the digest, no file is left over. */
async function restartedOutcome(stateDir: string, what: string): Promise<Outcome> {
  const d = await startDaemon({ stateDir });
  try {
    const files = (await readdir(path.join(stateDir, 'harnesses'))).sort();
    const res = await fetch(`${d.url}/harnesses/h`);
    if (res.status === 404) {
      await res.body?.cancel();
      expect(files, `${what}: leftovers in the store`).toEqual([]);
      expect(await (await fetch(`${d.url}/harnesses`)).json(), what).toEqual([]);
      return null;
    }
    expect(res.status, what).toBe(200);
    const detail = (await res.json()) as { digest: string; bindings: Record<string, unknown>; version: string };
    const image = new Uint8Array(await (await fetch(`${d.url}/harnesses/h/image`)).arrayBuffer());
    expect(sha256(image), `${what}: the stored bytes do not match the digest`).toBe(detail.digest);
    expect(await (await fetch(`${d.url}/harnesses`)).json(), what).toEqual([
      expect.objectContaining({ name: 'h', digest: detail.digest, version: detail.version }),
    ]);
    expect(files, `${what}: leftovers in the store`).toEqual(['h.json', 'h.wasm']);
    // The metadata on disk describes the image beside it (repaired at start if the stop came between the renames).
    const meta = JSON.parse(await readFile(path.join(stateDir, 'harnesses', 'h.json'), 'utf8')) as { digest: string };
    expect(meta.digest, what).toBe(detail.digest);
    return { digest: detail.digest, bindings: detail.bindings };
  } finally {
    await d.stop();
  }
}

/**
 * A state directory holding `old` deployed as `h` (or nothing), made once and copied for each step, so
 * each step starts from the same store.
 */
async function pristine(old: Version | undefined): Promise<string> {
  const stateDir = await tempDir('bermd-crash-');
  if (old !== undefined) {
    const d = await startDaemon({ stateDir });
    try {
      expect((await put(`${d.url}/harnesses/h${old.query}`, old.bytes)).status).toBe(201);
    } finally {
      await d.stop();
    }
  }
  return stateDir;
}

describe('bermd killed at each step of a deploy', { timeout: 300_000 }, () => {
  let v1: Version;
  let v2: Version;
  let v1Rebound: Version;
  const dirs: string[] = [];

  beforeAll(async () => {
    const one = await harnessImage(sampleManifest({ version: '1.0.0' }));
    const two = await harnessImage(sampleManifest({ version: '2.0.0' }));
    v1 = { bytes: one, query: '?timeout=2s', bindings: { timeout_ms: 2000 } };
    v2 = { bytes: two, query: '?timeout=3s&max_result_size=32K', bindings: { timeout_ms: 3000, max_result_bytes: 32 * 1024 } };
    v1Rebound = { bytes: one, query: '?timeout=4s', bindings: { timeout_ms: 4000 } };
  });
  afterAll(async () => {
    for (const dir of dirs) await removeDir(dir);
  });

  const outcomeOf = (v: Version | undefined): Outcome => (v === undefined ? null : { digest: sha256(v.bytes), bindings: v.bindings });

  /**
   * Deploys `next` over `old` once per step in `steps`, bermd killing itself there, and checks the
   * restart finds `old` before `commit` and `next` from it on.
   */
  async function eachStep(old: Version | undefined, next: Version, steps: FaultStep[], commit: FaultStep): Promise<void> {
    const from = await pristine(old);
    dirs.push(from);
    for (const step of steps) {
      const stateDir = await tempDir('bermd-crash-step-');
      dirs.push(stateDir);
      await cp(from, stateDir, { recursive: true });
      const d = await startDaemon({ stateDir, env: { BERMD_FAULT_AT: step } });
      await d.waitForLog((e) => e.step === step);
      const answered = await requestDuringWhichItDies(d, 'PUT', `/harnesses/h${next.query}`, next.bytes);
      expect(answered, `killed at ${step}, yet answered`).toBeUndefined();
      const committed = steps.indexOf(step) >= steps.indexOf(commit);
      expect(await restartedOutcome(stateDir, `killed at ${step}`), `killed at ${step}`).toEqual(
        committed ? outcomeOf(next) : outcomeOf(old),
      );
    }
  }

  it('a first deploy: absent until the image is renamed into place, the new harness from then on', async () => {
    // Without bindings: the first metadata write is skipped.
    const plain: Version = { ...v1, query: '', bindings: {} };
    await eachStep(
      undefined,
      plain,
      DEPLOY_STEPS.filter((s) => s !== 'store-bindings-written'),
      'store-image-renamed',
    );
  });

  it("a replace with bindings: each image with its own bindings, never the other one's", async () => {
    await eachStep(v1, v2, DEPLOY_STEPS, 'store-image-renamed');
  });

  it('the same image with new bindings: committed by the first metadata write', async () => {
    await eachStep(v1, v1Rebound, DEPLOY_STEPS, 'store-bindings-written');
  });

  it('a deploy that was answered survives a kill right after the answer', async () => {
    const stateDir = await pristine(v1);
    dirs.push(stateDir);
    const d = await startDaemon({ stateDir });
    const res = await put(`${d.url}/harnesses/h${v2.query}`, v2.bytes);
    expect(res.status).toBe(200);
    await d.stop('SIGKILL');
    expect(await restartedOutcome(stateDir, 'killed after the answer')).toEqual(outcomeOf(v2));
  });

  it('an undeploy: gone once its image is unlinked, and its metadata removed at start', async () => {
    const stateDir = await pristine(v1);
    dirs.push(stateDir);
    const d = await startDaemon({ stateDir, env: { BERMD_FAULT_AT: UNDEPLOY_STEP } });
    expect(await requestDuringWhichItDies(d, 'DELETE', '/harnesses/h')).toBeUndefined();
    expect((await readdir(path.join(stateDir, 'harnesses'))).sort()).toEqual(['h.json']);
    expect(await restartedOutcome(stateDir, 'killed after the unlink')).toBeNull();
  });

  it('usage written by the timed flush survives a kill', async () => {
    const stateDir = await pristine(v1);
    dirs.push(stateDir);
    let d = await startDaemon({ stateDir, env: { BERMD_FAULT_AT: USAGE_STEP } });
    const gone = exited(d.process);
    const before = new Date().toISOString();
    const c = await connect(d.url);
    await c.client.callTool({ name: 'h.echo', arguments: { query: 'q' } });
    const after = new Date().toISOString();
    // Nothing but the flush writes usage here; bermd kills itself right after it, before any shutdown.
    expect(await gone).toBe('SIGKILL');
    await c.client.close().catch(() => {});
    expect(d.log().some((e) => e.msg === 'shutting down')).toBe(false);

    d = await startDaemon({ stateDir });
    try {
      const detail = (await (await fetch(`${d.url}/harnesses/h`)).json()) as {
        last_used_at: string;
        usage: { tools: Record<string, string | null> };
      };
      expect(detail.usage.tools.echo).toBe(detail.last_used_at);
      expect(detail.last_used_at >= before && detail.last_used_at <= after, `${detail.last_used_at} within the call`).toBe(true);
    } finally {
      await d.stop();
    }
  });
});

describe('the fault seam', () => {
  it('has every step it names stopped at by the tests above', () => {
    expect([...DEPLOY_STEPS, UNDEPLOY_STEP, USAGE_STEP].sort()).toEqual([...FAULT_STEPS].sort());
  });

  it('refuses to start with a step it does not know, naming the steps', async () => {
    const stateDir = await tempDir('bermd-crash-');
    try {
      const started = startDaemon({ stateDir, env: { BERMD_FAULT_AT: 'store-image-renamd' } });
      await expect(started).rejects.toThrow(
        /exited \(2\) before listening:\nbermd: BERMD_FAULT_AT=store-image-renamd names no step; the steps are deploy-received, /,
      );
    } finally {
      await removeDir(stateDir);
    }
  });
});
