/**
 * Harness metadata as stores write it (JSON), and read back keeping only well-formed members: what is
 * read is data on disk or in a database, which a person may have edited.
 */
import type { Bindings } from '@berm/protocol';
import type { HarnessMeta } from './store.js';

export function encodeMeta(meta: HarnessMeta): string {
  return JSON.stringify(meta);
}

/** The metadata in `text`, or null when it is not metadata. */
export function decodeMeta(text: string): HarnessMeta | null {
  let value: Partial<HarnessMeta>;
  try {
    value = JSON.parse(text) as Partial<HarnessMeta>;
  } catch {
    return null;
  }
  if (typeof value?.digest !== 'string' || typeof value.deployed_at !== 'string' || typeof value.name !== 'string') return null;
  const used = value.used;
  const meta: HarnessMeta = {
    name: value.name,
    digest: value.digest,
    deployed_at: value.deployed_at,
    last_used_at: typeof value.last_used_at === 'string' ? value.last_used_at : null,
    used: { tools: { ...used?.tools }, events: { ...used?.events } },
  };
  if (typeof value.bindings === 'object' && value.bindings !== null) {
    const bindings: Record<string, Bindings> = {};
    for (const [digest, b] of Object.entries(value.bindings)) {
      const read = decodeBindings(b);
      if (read !== undefined) bindings[digest] = read;
    }
    meta.bindings = bindings;
  }
  return meta;
}

/** Stored bindings, keeping only well-formed members. */
export function decodeBindings(value: unknown): Bindings | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const out: Bindings = {};
  const count = (key: 'timeout_ms' | 'max_memory_bytes' | 'max_result_bytes' | 'max_concurrency'): void => {
    const n = v[key];
    if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) out[key] = n;
  };
  count('timeout_ms');
  count('max_memory_bytes');
  count('max_result_bytes');
  count('max_concurrency');
  const g = v.grants as Record<string, unknown> | undefined;
  if (typeof g === 'object' && g !== null) {
    const syscalls: Record<string, string[]> = {};
    if (typeof g.syscalls === 'object' && g.syscalls !== null) {
      for (const [name, hosts] of Object.entries(g.syscalls as Record<string, unknown>)) {
        if (Array.isArray(hosts)) syscalls[name] = hosts.filter((h): h is string => typeof h === 'string');
      }
    }
    const secrets = Array.isArray(g.secrets) ? g.secrets.filter((s): s is string => typeof s === 'string') : [];
    out.grants = { syscalls, secrets };
  }
  return out;
}

/** The bindings entry of the image `meta` describes, alone. */
export function onlyCurrent(meta: HarnessMeta): Record<string, Bindings> {
  const own = meta.bindings?.[meta.digest];
  return own === undefined ? {} : { [meta.digest]: own };
}
