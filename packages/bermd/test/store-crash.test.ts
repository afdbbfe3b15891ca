// The shared store suite's crash safety: bermd, on each kind of store (store-kinds.ts), killed with
// SIGKILL at each named step of a deploy, of an undeploy and of a usage write (BERMD_FAULT_AT,
// src/faults.ts: the process kills itself exactly there), then restarted: for every step the harness
// comes back as the step says it must (absent, the old one or the new one, each with its own bindings,
// never torn), its stored bytes match its digest, and nothing else is left in the store. Every restart
// also reads the deploy history and the images kept for a rollback: the newest entry agrees with what is
// served, an entry exists exactly for each change that took effect, and each kept image reads back with
// its digest, the served one never among them.
//
// A rollback reaches the same steps as a deploy (it is one, of an image the store keeps): the replace
// runs deploy an image the store keeps, so they cross the store's rollback at every step (the image kept
// becoming the one served, the one replaced becoming kept); the route itself is killed once, after its
// answer, and an undeploy cut short is undone after the restart.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_STEPS, type FaultStep } from '../dist/faults.js';
import type { HistoryEntry, RetainedImages } from '@berm/protocol';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { exited, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, put } from './mcp-client.js';
import { STORE_KINDS, type StoreKind, type StoreSite } from './store-kinds.js';

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

/** What a restart finds of the name, whole: what it serves, its history (newest first), and the digests it keeps (most recently served first). */
interface Found {
  outcome: Outcome;
  history: HistoryEntry[];
  retained: string[];
}

/** Each store's steps: where a deploy, an undeploy and a usage write stop, and where each commits. */
interface StoreSteps {
  /** A deploy's steps, in the order it reaches them (FAULT_STEPS lists them so). */
  deploy: FaultStep[];
  /** Steps a deploy without bindings does not reach. */
  withBindingsOnly: FaultStep[];
  /** From this step on, a deploy is committed. */
  commit: FaultStep;
  /** ...and a deploy of the stored image with new bindings. */
  rebindCommit: FaultStep;
  /** An undeploy's steps, each with whether the harness is gone after it and what the store holds raw before a restart. */
  undeploy: Array<{ step: FaultStep; gone: boolean; raw: string[] }>;
}

const REGISTRY_STEPS: FaultStep[] = ['deploy-received', 'deploy-prepared'];
const USAGE_STEP: FaultStep = 'usage-written';

const STEPS: Record<StoreKind['name'], StoreSteps> = {
  directory: {
    deploy: [...REGISTRY_STEPS, ...FAULT_STEPS.filter((s) => s.startsWith('store-'))],
    withBindingsOnly: ['store-bindings-written'],
    // The image's rename; the same image with new bindings commits with its first metadata write.
    commit: 'store-image-renamed',
    rebindCommit: 'store-bindings-written',
    // The unlink is the commit point; the metadata left beside nothing is removed at start.
    undeploy: [
      { step: 'undeploy-image-retained', gone: false, raw: ['h.json', 'h.wasm'] },
      { step: 'undeploy-image-removed', gone: true, raw: ['h.json'] },
    ],
  },
  postgres: {
    deploy: [...REGISTRY_STEPS, ...FAULT_STEPS.filter((s) => s.startsWith('pg-deploy-'))],
    withBindingsOnly: [],
    // One transaction: its commit, whatever the deploy writes.
    commit: 'pg-deploy-committed',
    rebindCommit: 'pg-deploy-committed',
    undeploy: [
      { step: 'pg-undeploy-deleted', gone: false, raw: ['h'] },
      { step: 'pg-undeploy-committed', gone: true, raw: [] },
    ],
  },
};

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

/**
 * What a restarted daemon on `site` holds as `h`, checked whole: the listing agrees, the bytes match the
 * digest, nothing else is stored; the newest history entry names what is served (null: nothing); each kept
 * image reads back with its digest, the served one not among them. `then` runs on the daemon before it stops.
 */
async function restarted(site: StoreSite, what: string, then?: (d: RunningDaemon) => Promise<void>): Promise<Found> {
  const d = await startDaemon(site.start);
  try {
    const outcome = await servedOutcome(d, site, what);
    const history = await historyOf(d, what);
    expect(history[0]?.to?.digest ?? null, `${what}: the newest history entry does not name what is served`).toBe(outcome?.digest ?? null);
    const retained = await keptImages(d, outcome, what);
    await then?.(d);
    return { outcome, history, retained };
  } finally {
    await d.stop();
  }
}

async function servedOutcome(d: RunningDaemon, site: StoreSite, what: string): Promise<Outcome> {
  const raw = await site.raw();
  const res = await fetch(`${d.url}/harnesses/h`);
  if (res.status === 404) {
    await res.body?.cancel();
    expect(raw, `${what}: leftovers in the store`).toEqual([]);
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
  expect(raw, `${what}: leftovers in the store`).toEqual(site.rawOf(['h']));
  // The metadata describes the image beside it (repaired at start if the stop left them disagreeing).
  expect(await site.recordedDigest('h'), what).toBe(detail.digest);
  return { digest: detail.digest, bindings: detail.bindings };
}

async function historyOf(d: RunningDaemon, what: string): Promise<HistoryEntry[]> {
  const res = await fetch(`${d.url}/harnesses/h/history?limit=500`);
  expect(res.status, what).toBe(200);
  const page = (await res.json()) as { entries: HistoryEntry[]; next_cursor: string | null };
  expect(page.next_cursor, what).toBeNull();
  return page.entries;
}

/** The digests kept for `h`, each read back and checked against its digest; the served one is not listed. */
async function keptImages(d: RunningDaemon, outcome: Outcome, what: string): Promise<string[]> {
  const res = await fetch(`${d.url}/harnesses/h/images`);
  if (res.status === 404) {
    await res.body?.cancel();
    expect(outcome, `${what}: no images, yet a harness is served`).toBeNull();
    return [];
  }
  expect(res.status, what).toBe(200);
  const images = (await res.json()) as RetainedImages;
  expect(images.current?.digest ?? null, what).toBe(outcome?.digest ?? null);
  const digests = images.retained.map((i) => i.digest);
  expect(digests, `${what}: the served image is listed as kept`).not.toContain(outcome?.digest);
  for (const digest of digests) {
    const bytes = new Uint8Array(await (await fetch(`${d.url}/harnesses/h/images/${digest}`)).arrayBuffer());
    expect(sha256(bytes), `${what}: the kept image ${digest} does not read back as itself`).toBe(digest);
  }
  return digests;
}

/** What a name that served `served`, in this order, keeps: each image served before the last, most recent first, once, the last's digest aside. */
function keptAfter(served: Version[]): string[] {
  const digests = served.map((v) => sha256(v.bytes));
  const now = digests.at(-1);
  return [...new Set(digests.slice(0, -1).reverse())].filter((d) => d !== now);
}

describe.each(STORE_KINDS)('bermd on the $name store killed at each step', { timeout: 300_000 }, (kind) => {
  const steps = STEPS[kind.name];
  let v1: Version;
  let v2: Version;
  let v1Rebound: Version;
  const sites: StoreSite[] = [];

  beforeAll(async () => {
    const one = await harnessImage(sampleManifest({ version: '1.0.0' }));
    const two = await harnessImage(sampleManifest({ version: '2.0.0' }));
    v1 = { bytes: one, query: '?timeout=2s', bindings: { timeout: 2000 } };
    v2 = { bytes: two, query: '?timeout=3s&max_result_size=32K', bindings: { timeout: 3000, max_result_size: 32 * 1024 } };
    v1Rebound = { bytes: one, query: '?timeout=4s', bindings: { timeout: 4000 } };
  });
  afterAll(async () => {
    for (const site of sites) await site.dispose();
  });

  const kept = async (site: Promise<StoreSite>): Promise<StoreSite> => {
    const s = await site;
    sites.push(s);
    return s;
  };

  /** A site where `h` was deployed as each of `served` in turn (or nothing), made once and copied for each step, so each step starts from the same store. */
  async function pristine(...served: Version[]): Promise<StoreSite> {
    const site = await kept(kind.site());
    if (served.length > 0) {
      const d = await startDaemon(site.start);
      try {
        for (const [i, v] of served.entries())
          expect((await put(`${d.url}/harnesses/h${v.query}`, v.bytes)).status).toBe(i === 0 ? 201 : 200);
      } finally {
        await d.stop();
      }
    }
    return site;
  }

  const outcomeOf = (v: Version | undefined): Outcome => (v === undefined ? null : { digest: sha256(v.bytes), bindings: v.bindings });

  /**
   * Deploys `next` over a name that served each of `before` in turn, once per step in `each`, bermd
   * killing itself there, and checks the restart finds the last of `before` before `commit` and `next`
   * from it on: its history one entry longer exactly then, its kept images those of what was served.
   */
  async function eachStep(before: Version[], next: Version, each: FaultStep[], commit: FaultStep): Promise<void> {
    const from = await pristine(...before);
    for (const step of each) {
      const site = await kept(from.copy());
      const d = await startDaemon({ ...site.start, env: { BERMD_FAULT_AT: step } });
      await d.waitForLog((e) => e.step === step);
      const answered = await requestDuringWhichItDies(d, 'PUT', `/harnesses/h${next.query}`, next.bytes);
      const what = `killed at ${step}`;
      expect(answered, `${what}, yet answered`).toBeUndefined();
      const committed = each.indexOf(step) >= each.indexOf(commit);
      const served = committed ? [...before, next] : before;
      const found = await restarted(site, what);
      expect(found.outcome, what).toEqual(outcomeOf(served.at(-1)));
      expect(found.history.length, `${what}: an entry for each change that took effect, and no other`).toBe(served.length);
      expect(found.retained, what).toEqual(keptAfter(served));
    }
  }

  it.skipIf(kind.unavailable !== undefined)('a first deploy: absent until its commit point, the new harness from then on', async () => {
    // Without bindings: a store's bindings-only steps are skipped.
    const plain: Version = { ...v1, query: '', bindings: {} };
    await eachStep(
      [],
      plain,
      steps.deploy.filter((s) => !steps.withBindingsOnly.includes(s)),
      steps.commit,
    );
  });

  it.skipIf(kind.unavailable !== undefined)(
    "a replace with bindings, by an image the store keeps (a rollback's steps): each image with its own bindings, never the other one's",
    async () => {
      // v2 served, then replaced by v1: the store keeps v2, with its bindings, and the deploy of v2 brings it back.
      await eachStep([v2, v1], v2, steps.deploy, steps.commit);
    },
  );

  it.skipIf(kind.unavailable !== undefined)('the same image with new bindings: committed at its own commit point', async () => {
    await eachStep([v1], v1Rebound, steps.deploy, steps.rebindCommit);
  });

  it.skipIf(kind.unavailable !== undefined)(
    'a deploy and a rollback that were answered survive a kill right after the answer',
    async () => {
      const site = await pristine(v1);
      const d = await startDaemon(site.start);
      expect((await put(`${d.url}/harnesses/h${v2.query}`, v2.bytes)).status).toBe(200);
      // One step back, to v1, with the bindings it was deployed with.
      const back = await fetch(`${d.url}/harnesses/h/rollback`, { method: 'POST' });
      expect(back.status).toBe(200);
      expect(((await back.json()) as { entry: HistoryEntry }).entry).toMatchObject({
        action: 'rollback',
        to: { digest: sha256(v1.bytes) },
      });
      await d.stop('SIGKILL');
      const found = await restarted(site, 'killed after the answers');
      expect(found.outcome).toEqual(outcomeOf(v1));
      expect(found.history.map((e) => [e.action, e.to?.digest])).toEqual([
        ['rollback', sha256(v1.bytes)],
        ['deploy', sha256(v2.bytes)],
        ['deploy', sha256(v1.bytes)],
      ]);
      expect(found.retained).toEqual([sha256(v2.bytes)]);
    },
  );

  it.skipIf(kind.unavailable !== undefined)(
    'an undeploy: there until its commit point, gone from it on, nothing left behind, and undone after the restart',
    async () => {
      const from = await pristine(v1);
      for (const { step, gone, raw } of steps.undeploy) {
        const what = `killed at ${step}`;
        const site = await kept(from.copy());
        const d = await startDaemon({ ...site.start, env: { BERMD_FAULT_AT: step } });
        expect(await requestDuringWhichItDies(d, 'DELETE', '/harnesses/h'), `${what}, yet answered`).toBeUndefined();
        expect(await site.raw(), what).toEqual(raw);
        const found = await restarted(site, what, async (again) => {
          if (!gone) return;
          // The undeploy took effect: its undo brings v1 back, with its bindings.
          const listed = (await (await fetch(`${again.url}/undeployed`)).json()) as { harnesses: Array<{ name: string; last: unknown }> };
          expect(listed.harnesses, what).toEqual([
            expect.objectContaining({ name: 'h', last: expect.objectContaining({ digest: sha256(v1.bytes) }) }),
          ]);
          const undo = await fetch(`${again.url}/harnesses/h/rollback`, { method: 'POST' });
          expect(undo.status, what).toBe(201);
          const detail = (await (await fetch(`${again.url}/harnesses/h`)).json()) as { digest: string; bindings: unknown };
          expect(detail, what).toMatchObject(outcomeOf(v1)!);
        });
        expect(found.outcome, what).toEqual(gone ? null : outcomeOf(v1));
        expect(
          found.history.map((e) => e.action),
          what,
        ).toEqual(gone ? ['undeploy', 'deploy'] : ['deploy']);
        expect(found.retained, what).toEqual(gone ? [sha256(v1.bytes)] : []);
      }
    },
  );

  it.skipIf(kind.unavailable !== undefined)('usage written by the timed flush survives a kill', async () => {
    const site = await pristine(v1);
    let d = await startDaemon({ ...site.start, env: { BERMD_FAULT_AT: USAGE_STEP } });
    const gone = exited(d.process);
    const before = new Date().toISOString();
    const c = await connect(d.url);
    await c.client.callTool({ name: 'h.echo', arguments: { query: 'q' } });
    const after = new Date().toISOString();
    // Nothing but the flush writes usage here; bermd kills itself right after it, before any shutdown.
    expect(await gone).toBe('SIGKILL');
    await c.client.close().catch(() => {});
    expect(d.log().some((e) => e.msg === 'shutting down')).toBe(false);

    d = await startDaemon(site.start);
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
  it('has every step it names stopped at by the tests above, on one store or the other', () => {
    const stopped = new Set<FaultStep>([USAGE_STEP]);
    for (const steps of Object.values(STEPS)) for (const step of [...steps.deploy, ...steps.undeploy.map((u) => u.step)]) stopped.add(step);
    expect([...stopped].sort()).toEqual([...FAULT_STEPS].sort());
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
