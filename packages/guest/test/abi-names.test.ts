// The guest library (assembly/, AssemblyScript, which cannot import @berm/protocol) writes the ABI's
// names itself: its host-call imports and its allocator. These tests read them from its sources and
// hold them to the protocol's, so a name changed on one side fails here rather than in a deployed image.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { ABI_HOST_CALLS, ALLOC_EXPORT, SYSCALL } from '@berm/protocol';
import { beforeAll, describe, expect, it } from 'vitest';

const ASSEMBLY = join(dirname(createRequire(import.meta.url).resolve('@berm/guest/package.json')), 'assembly');

/** Each `@external("module", "field")` of the library, as the dotted name a host call goes by. */
function externals(text: string): string[] {
  return [...text.matchAll(/@external\(\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)/g)].map((m) => `${m[1]}.${m[2]}`);
}

describe('the guest library and @berm/protocol name the ABI alike', () => {
  const sources = new Map<string, string>();

  beforeAll(async () => {
    for (const name of await readdir(ASSEMBLY)) {
      if (name.endsWith('.ts')) sources.set(name, await readFile(join(ASSEMBLY, name), 'utf8'));
    }
  });

  it('imports exactly the ABI host calls, and beyond them only syscalls the protocol names', () => {
    const all = [...sources.values()];
    const imported = all.flatMap(externals);
    // Every @external is read: one written in another form would escape the comparison.
    expect(imported.length).toBe(all.reduce((n, text) => n + (text.match(/@external\(/g)?.length ?? 0), 0));
    expect(imported.filter((name) => ABI_HOST_CALLS.has(name)).sort()).toEqual([...ABI_HOST_CALLS].sort());
    const syscalls = new Set<string>(Object.values(SYSCALL));
    expect(imported.filter((name) => !ABI_HOST_CALLS.has(name) && !syscalls.has(name))).toEqual([]);
  });

  it('exports the allocator under the protocol name, from the entry a harness imports', () => {
    expect(sources.get('abi.ts')).toMatch(new RegExp(`^export function ${ALLOC_EXPORT}\\(len: i32\\): usize \\{`, 'm'));
    const reexport = /^export \{([^}]*)\} from '\.\/abi';$/m.exec(sources.get('index.ts') ?? '');
    expect(reexport?.[1]?.split(',').map((name) => name.trim())).toContain(ALLOC_EXPORT);
  });
});
