// The kinds of store the shared store suite runs over (store.test.ts, store-crash.test.ts): where each
// keeps a deployed set (a site), how a bermd process is pointed at it, how a site is copied whole (so
// each crash step starts from the same store), and what is stored there, read raw, beneath the store's
// own interface.
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { DirectoryStore, type HarnessStore, PostgresStore, type RetentionPolicy } from '../dist/deploy/index.js';
import { removeDir, type StartOptions, tempDir } from './daemon.js';
import { createDatabase, dropDatabase, POSTGRES_URL, sql } from './postgres.js';

const logger = pino({ level: 'silent' });

export interface StoreSite {
  /** A new store on this site, keeping what `retention` says (the defaults, and the real clock, for what it leaves out). */
  open(retention?: Partial<RetentionPolicy>): Promise<HarnessStore>;
  /** How a bermd process keeps its set here. */
  start: Pick<StartOptions, 'stateDir' | 'store'>;
  /** Another site holding what this one holds now (nothing may have it open). */
  copy(): Promise<StoreSite>;
  /** What is stored, raw and sorted: file names in the state directory, or names with a row. */
  raw(): Promise<string[]>;
  /** `raw()` of a site holding exactly `names`, whole. */
  rawOf(names: string[]): string[];
  /** The digest the metadata (or row) beside the image names. */
  recordedDigest(name: string): Promise<string>;
  /** Writes the bindings stored for `name`'s image as they are given, raw, as an earlier version would have written them. */
  writeRawBindings(name: string, bindings: Record<string, unknown>): Promise<void>;
  /** Makes the metadata (or row) beside the image name another image, `digest`, with the bindings it holds recorded for that image. */
  recordOtherImage(name: string, digest: string): Promise<void>;
  /**
   * Makes what is stored as a bermd that recorded no deployer left it: `name`'s metadata without
   * `deployed_by`; the PostgreSQL schema back at version 1, without its columns (nothing may have it open).
   */
  forgetDeployers(name: string): Promise<void>;
  /** The digests of the images kept for `name` (besides the one served), as stored raw, sorted: files, or rows. */
  retainedRaw(name: string): Promise<string[]>;
  /** Changes the stored bytes of the image kept for `name` under `digest` in place, as a hand or a fault might. */
  corruptRetained(name: string, digest: string): Promise<void>;
  dispose(): Promise<void>;
}

export interface StoreKind {
  name: 'directory' | 'postgres';
  /** Why the kind cannot run here (no PostgreSQL in this run), else undefined. */
  unavailable?: string;
  /** An empty site. */
  site(): Promise<StoreSite>;
}

function directorySite(stateDir: string): StoreSite {
  const dir = path.join(stateDir, 'harnesses');
  return {
    open: (retention) => DirectoryStore.open(stateDir, retention),
    start: { stateDir },
    copy: async () => {
      const to = await tempDir('bermd-store-');
      await cp(stateDir, to, { recursive: true });
      return directorySite(to);
    },
    raw: async () => (await readdir(dir).catch(() => [] as string[])).sort(),
    rawOf: (names) => names.flatMap((n) => [`${n}.json`, `${n}.wasm`]).sort(),
    recordedDigest: async (name) => (JSON.parse(await readFile(path.join(dir, `${name}.json`), 'utf8')) as { digest: string }).digest,
    writeRawBindings: async (name, bindings) => {
      const file = path.join(dir, `${name}.json`);
      const meta = JSON.parse(await readFile(file, 'utf8')) as { digest: string; bindings?: Record<string, unknown> };
      await writeFile(file, JSON.stringify({ ...meta, bindings: { [meta.digest]: bindings } }));
    },
    recordOtherImage: async (name, digest) => {
      const file = path.join(dir, `${name}.json`);
      const meta = JSON.parse(await readFile(file, 'utf8')) as { digest: string; bindings?: Record<string, unknown> };
      const own = meta.bindings?.[meta.digest];
      await writeFile(file, JSON.stringify({ ...meta, digest, bindings: own === undefined ? {} : { [digest]: own } }));
    },
    forgetDeployers: async (name) => {
      const file = path.join(dir, `${name}.json`);
      const { deployed_by: _, ...meta } = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      await writeFile(file, JSON.stringify(meta));
    },
    retainedRaw: async (name) =>
      (await readdir(path.join(stateDir, 'images', name)).catch(() => [] as string[]))
        .filter((f) => f.endsWith('.wasm'))
        .map((f) => `sha256:${f.slice(0, -'.wasm'.length)}`)
        .sort(),
    corruptRetained: async (name, digest) => {
      const file = path.join(stateDir, 'images', name, `${digest.slice('sha256:'.length)}.wasm`);
      const bytes = await readFile(file);
      bytes[bytes.length - 1] ^= 0xff;
      await writeFile(file, bytes);
    },
    dispose: () => removeDir(stateDir),
  };
}

function postgresSite(url: string): StoreSite {
  return {
    open: (retention) => PostgresStore.open(url, { logger, retention }),
    start: { store: url },
    copy: async () => postgresSite(await createDatabase(url)),
    raw: async () => {
      const tables = await sql<{ t: string | null }>(url, "SELECT to_regclass('berm_harness')::text AS t");
      if (tables[0]!.t === null) return [];
      return (await sql<{ name: string }>(url, 'SELECT name FROM berm_harness ORDER BY name COLLATE "C"')).map((r) => r.name);
    },
    rawOf: (names) => [...names].sort(),
    recordedDigest: async (name) =>
      (await sql<{ digest: string }>(url, 'SELECT digest FROM berm_harness WHERE name = $1', [name]))[0]!.digest,
    writeRawBindings: async (name, bindings) => {
      await sql(url, 'UPDATE berm_harness SET bindings = $2::jsonb WHERE name = $1', [name, JSON.stringify(bindings)]);
    },
    // A row's bindings are those of the image it names.
    recordOtherImage: async (name, digest) => void (await sql(url, 'UPDATE berm_harness SET digest = $2 WHERE name = $1', [name, digest])),
    forgetDeployers: async () => {
      // Back to schema 1 whole: every column a later schema added goes, so the migrations run again as on an old database.
      await sql(
        url,
        'ALTER TABLE berm_harness DROP COLUMN deployed_by, DROP COLUMN deployed_by_revision, DROP COLUMN source, DROP COLUMN source_revision',
      );
      await sql(url, 'DROP TABLE IF EXISTS berm_history, berm_image, berm_session, berm_receipt');
      await sql(url, 'UPDATE berm_schema SET version = 1');
    },
    retainedRaw: async (name) =>
      (await sql<{ digest: string }>(url, 'SELECT digest FROM berm_image WHERE harness = $1 ORDER BY digest COLLATE "C"', [name])).map(
        (r) => r.digest,
      ),
    corruptRetained: async (name, digest) => {
      await sql(url, "UPDATE berm_image SET image = image || '\\x00'::bytea WHERE harness = $1 AND digest = $2", [name, digest]);
    },
    dispose: () => dropDatabase(url),
  };
}

export const STORE_KINDS: StoreKind[] = [
  { name: 'directory', site: async () => directorySite(await tempDir('bermd-store-')) },
  {
    name: 'postgres',
    unavailable: POSTGRES_URL === null ? 'no PostgreSQL in this run' : undefined,
    site: async () => postgresSite(await createDatabase()),
  },
];
