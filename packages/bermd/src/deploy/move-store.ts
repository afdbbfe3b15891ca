/**
 * Moving a deployed set from one store to another (`bermd migrate-store`): each harness with its image,
 * bindings, deploy time and usage, through the stores' own transactions, so the target's promises hold
 * (a stop leaves each harness moved or not). A name the target already holds is left as it is there:
 * moving never replaces what another bermd deployed. Nothing is removed from the source.
 */
import { Manifest } from '@berm/manifest';
import type { HarnessStore } from './store.js';

export interface MovedHarness {
  name: string;
  digest: string;
  outcome: 'moved' | 'already-there' | 'held-elsewise' | 'unreadable';
  /** For `unreadable`: why. */
  reason?: string;
}

/** Moves every harness of `from` that `to` does not hold; answers what became of each, in name order. */
export async function moveStore(from: HarnessStore, to: HarnessStore): Promise<MovedHarness[]> {
  const report: MovedHarness[] = [];
  for (const name of await from.names()) {
    const stored = await from.load(name);
    if (stored === null) continue;
    let manifest: Manifest;
    try {
      manifest = Manifest.fromImage(stored.bytes);
    } catch (e) {
      report.push({ name, digest: stored.digest, outcome: 'unreadable', reason: (e as Error).message });
      continue;
    }
    const outcome = await to.transaction(name, async (tx): Promise<MovedHarness['outcome']> => {
      if (tx.current !== null) return tx.current.digest === stored.digest ? 'already-there' : 'held-elsewise';
      // The history the other store kept stays there; here it begins with the move.
      await tx.save(stored.bytes, stored.meta, manifest.data, {
        action: 'deploy',
        at: stored.meta.deployed_at,
        principal: stored.meta.deployed_by ?? null,
        replica: 'bermd migrate-store',
        from: null,
        to: { digest: stored.digest, version: manifest.data.version },
        forced: false,
        forced_past: [],
        reported: [],
        notices: [],
      });
      return 'moved';
    });
    report.push({ name, digest: stored.digest, outcome });
  }
  return report;
}
