// kill -9 during deploys of a large image, at varying points; after each restart the harness is
// absent, the old one or the new one, whole, and its stored bytes match its digest.
import { createHash } from 'node:crypto';
import { watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { exited, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const ITERATIONS = 20;
const IMAGE_BYTES = 4 * 1024 * 1024;

/**
 * Where the kill lands: part of the body sent (a varying share); the whole body sent (bermd reading or
 * compiling it); a temp file showing in the store (writing it); the image renamed into place (before
 * the metadata follows); the answer received.
 */
type KillPoint = 'after-bytes-sent' | 'after-body-sent' | 'on-temp-file' | 'on-image-rename' | 'after-answer';
const KILL_POINTS: KillPoint[] = ['after-bytes-sent', 'after-body-sent', 'on-temp-file', 'on-image-rename', 'after-answer'];

/** Starts a deploy and kills bermd with SIGKILL at `point`; resolves once the process is gone. */
async function deployAndKill(d: RunningDaemon, bytes: Uint8Array, point: KillPoint, fraction: number): Promise<number | undefined> {
  const dir = path.join(d.stateDir, 'harnesses');
  const kill = (): void => {
    d.process.kill('SIGKILL');
  };
  const gone = exited(d.process);
  const watcher =
    point === 'on-temp-file' || point === 'on-image-rename'
      ? watch(dir, (_event, file) => {
          if (point === 'on-temp-file' && file?.startsWith('.tmp-')) kill();
          if (point === 'on-image-rename' && file === 'big.wasm') kill();
        })
      : undefined;
  let req: ClientRequest | undefined;
  let answered: number | undefined;
  try {
    req = httpRequest(`${d.url}/harnesses/big`, {
      method: 'PUT',
      agent: false,
      headers: { 'content-type': 'application/wasm', 'content-length': String(bytes.length) },
    });
    req.on('error', () => {}); // the connection dies with the daemon
    req.on('response', (res) => {
      res.resume();
      answered = res.statusCode;
      if (point === 'after-answer') kill();
    });
    if (point === 'after-bytes-sent') {
      const sent = Math.floor(bytes.length * fraction);
      req.write(bytes.subarray(0, sent), () => kill());
    } else if (point === 'after-body-sent') {
      req.end(bytes, () => kill());
    } else {
      req.end(bytes);
    }
    await gone;
    return answered;
  } finally {
    watcher?.close();
    req?.destroy();
  }
}

describe('bermd killed during deploys', () => {
  it(`restarts with the old or the new harness, never a torn one (${ITERATIONS} kills)`, async () => {
    const stateDir = await tempDir('bermd-crash-');
    const dir = path.join(stateDir, 'harnesses');
    let d = await startDaemon({ stateDir });
    let current: string | null = null;
    const seen = { absent: 0, old: 0, new: 0 };
    try {
      for (let i = 0; i < ITERATIONS; i++) {
        const point = KILL_POINTS[i % KILL_POINTS.length]!;
        const bytes = await harnessImage(sampleManifest({ version: `0.0.${i}` }), { padBytes: IMAGE_BYTES, padSeed: i + 1 });
        const next = sha256(bytes);
        const answered = await deployAndKill(d, bytes, point, (i + 1) / (ITERATIONS + 1));
        if (point === 'after-answer') expect(answered, `iteration ${i}: the deploy was not accepted`).toBe(current === null ? 201 : 200);

        d = await startDaemon({ stateDir });
        const res = await fetch(`${d.url}/harnesses/big`);
        const what = `iteration ${i}, killed ${point}`;
        if (res.status === 404) {
          await res.body?.cancel();
          expect(current, `${what}: the harness vanished`).toBeNull();
          seen.absent++;
        } else {
          expect(res.status, what).toBe(200);
          const detail = (await res.json()) as { digest: string; version: string };
          expect([current, next], `${what}: neither old nor new`).toContain(detail.digest);
          if (point === 'after-answer') expect(detail.digest, `${what}: an answered deploy was lost`).toBe(next);
          const image = new Uint8Array(await (await fetch(`${d.url}/harnesses/big/image`)).arrayBuffer());
          expect(sha256(image), `${what}: the stored bytes do not match the digest`).toBe(detail.digest);
          const list = (await (await fetch(`${d.url}/harnesses`)).json()) as { name: string; digest: string; version: string }[];
          expect(list, what).toEqual([expect.objectContaining({ name: 'big', digest: detail.digest, version: detail.version })]);
          if (detail.digest === next) seen.new++;
          else seen.old++;
          current = detail.digest;
        }
        const files = (await readdir(dir)).sort();
        expect(files, `${what}: leftovers in the store`).toEqual(current === null ? [] : ['big.json', 'big.wasm']);
      }
    } finally {
      await d.stop('SIGKILL');
      await removeDir(stateDir);
    }
    // Every kill point was reached with both outcomes possible; at least the answered deploys took.
    expect(seen.new).toBeGreaterThanOrEqual(ITERATIONS / KILL_POINTS.length);
  }, 120_000);
});
