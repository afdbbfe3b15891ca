// Writes harnesses into a state directory before bermd starts, in the store's documented format
// (`harnesses/<name>.wasm` and `<name>.json`), so a test can give them uses in the past.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { digestOf } from '../dist/deploy/index.js';

export interface SeededUse {
  /** Last use per tool, as epoch milliseconds. */
  tools?: Record<string, number>;
  /** Last use per event, as epoch milliseconds. */
  events?: Record<string, number>;
  /** When it was deployed; a day before the earliest use by default. */
  deployedAt?: number;
}

const isoOf = (uses: Record<string, number> = {}): Record<string, string> =>
  Object.fromEntries(Object.entries(uses).map(([name, ms]) => [name, new Date(ms).toISOString()]));

/** Stores `bytes` as harness `name` under `stateDir`, with the given last uses. */
export async function seedHarness(stateDir: string, name: string, bytes: Uint8Array, use: SeededUse = {}): Promise<void> {
  const dir = path.join(stateDir, 'harnesses');
  await mkdir(dir, { recursive: true });
  const times = [...Object.values(use.tools ?? {}), ...Object.values(use.events ?? {})];
  const last = times.length > 0 ? Math.max(...times) : undefined;
  const first = times.length > 0 ? Math.min(...times) : Date.now();
  await writeFile(path.join(dir, `${name}.wasm`), bytes);
  const meta = {
    name,
    digest: digestOf(bytes),
    deployed_at: new Date(use.deployedAt ?? first - 24 * 3600 * 1000).toISOString(),
    last_used_at: last === undefined ? null : new Date(last).toISOString(),
    used: { tools: isoOf(use.tools), events: isoOf(use.events) },
  };
  await writeFile(path.join(dir, `${name}.json`), JSON.stringify(meta));
}
