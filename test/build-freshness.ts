/**
 * Tests import each package's dist/, which the test command (`npm test`, `pnpm test`) builds first. A
 * bare `npx vitest run` after an edit would test the previous build and say nothing: vitest runs this
 * before any suite (globalSetup in vitest.config.ts) and refuses to start when a build is older than
 * its sources, naming what changed and how to rebuild.
 *
 * `tsc -b` rewrites a project's .tsbuildinfo whenever a source is newer than it (even when nothing it
 * emits changes), so a source newer than that file is a source the build has not seen. The manifest
 * validator, which the build generates from the schema and writes only when it changes, is compared by
 * content instead. bermd's bundles (scripts/bundle.js), written after the compile and the validator,
 * must be newer than the build records of what they hold: bermd falls back to the modules when they are
 * not, which the tests of the bundles would then not be testing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The newest file under `dir` (recursively) with its modification time; undefined when there is none. */
function newest(dir: string): { file: string; mtimeMs: number } | undefined {
  let found: { file: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(file);
    if (found === undefined || mtimeMs > found.mtimeMs) found = { file, mtimeMs };
  }
  return found;
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Each TypeScript project under `root` (its tsconfig.json's references) whose build is older than a source, as a sentence. */
export function staleBuilds(root: string = repoRoot): string[] {
  const { references = [] } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as {
    references?: Array<{ path: string }>;
  };
  const stale: string[] = [];
  for (const { path: project } of references) {
    const dir = path.join(root, project);
    const built = mtimeOf(path.join(dir, 'tsconfig.tsbuildinfo'));
    const source = newest(path.join(dir, 'src'));
    const config = { file: path.join(dir, 'tsconfig.json'), mtimeMs: mtimeOf(path.join(dir, 'tsconfig.json')) ?? 0 };
    const latest = source === undefined || config.mtimeMs > source.mtimeMs ? config : source;
    if (built === undefined) stale.push(`${project} has never been built`);
    else if (latest.mtimeMs > built) stale.push(`${path.relative(root, latest.file)} changed after ${project} was last built`);
  }
  return stale;
}

/** bermd's bundles (the embedded runtime's, the worker's), each missing or older than a compile of a package it holds, as sentences. */
export function staleBundle(root: string = repoRoot): string[] {
  const records = [
    'bermd/tsconfig.tsbuildinfo',
    'manifest/tsconfig.tsbuildinfo',
    'manifest/dist/manifest-validator.js',
    'protocol/tsconfig.tsbuildinfo',
  ];
  return ['embedded-bundle.cjs', 'worker-bundle.cjs'].flatMap((name) => {
    const bundle = path.join(root, 'packages/bermd/dist/runtime', name);
    const built = mtimeOf(bundle);
    if (built === undefined) return [`${path.relative(root, bundle)} has never been built`];
    return records
      .filter((record) => (mtimeOf(path.join(root, 'packages', record)) ?? 0) > built)
      .map((record) => `packages/${record} changed after ${path.relative(root, bundle)} was built`);
  });
}

export default async function checkBuild(): Promise<void> {
  const stale = staleBuilds();
  const validator = await import('../packages/manifest/scripts/build-validator.js');
  let generated: string | undefined;
  try {
    generated = readFileSync(validator.outputFile, 'utf8');
  } catch {
    generated = undefined;
  }
  stale.push(...staleBundle());
  if (generated !== validator.validatorSource())
    stale.push(`${path.relative(repoRoot, validator.outputFile)} is not what packages/manifest/schema/manifest.schema.json generates`);
  if (stale.length > 0) {
    throw new Error(
      `the tests would run against an out-of-date build:\n  ${stale.join('\n  ')}\n` +
        'run `npm run build` first, or run the tests with `npx -y pnpm@10 test` (or `npm test`), which builds before testing',
    );
  }
}
