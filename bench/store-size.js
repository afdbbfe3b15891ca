// Benchmark (not a test) of what the deploy history and the images kept for a rollback cost: the store's
// size after BENCH_DEPLOYS deploys of one harness, each a distinct image of about 1 MiB (a data segment of
// random bytes in a module built from the WAT below), with --keep-images 5 (the default) and with 0.
// Baseline, same run: the size of the same store, with the same setting, after the first deploy; every
// size is printed beside its ratio to that baseline.
//
// - Directory store: the bytes the state directory takes on disk (allocated blocks, each file once:
//   a kept image is a hard link to the file it was).
// - PostgreSQL (on a private server this starts and removes, test/helpers/postgres-server.js; skipped,
//   saying why, when none can be started): pg_total_relation_size of bermd's tables (their TOAST and
//   indexes included). Autovacuum is turned off on that server so no figure depends on when it ran:
//   "no vacuum" holds the rows every deploy replaced or trimmed, which a vacuum makes reusable; "then
//   VACUUM FULL" is what the rows bermd keeps take; "VACUUM each deploy" is a run where a plain VACUUM
//   follows every deploy, as autovacuum keeping up would, so the space of dead rows is used again.
//
// Build first: npm run build. Run: node bench/store-size.js
// Settings: BENCH_DEPLOYS (100), BENCH_IMAGE_SIZE (random bytes per image, 1048576).
import { randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeManifestSection } from '@berm/manifest';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { closeAgent, put, startBermd } from './lib/daemon.js';
import { manifest, wat2wasm } from './lib/guests.js';

const DEPLOYS = Number(process.env.BENCH_DEPLOYS ?? 100);
const IMAGE_SIZE = Number(process.env.BENCH_IMAGE_SIZE ?? 1024 * 1024);
const KEEP = [5, 0];

// node-postgres as bermd resolves it: the benchmarks have no dependencies of their own.
const pg = createRequire(new URL('../packages/bermd/package.json', import.meta.url))('pg');

/**
 * `count` deployable images, alike but for IMAGE_SIZE random bytes: the module is compiled once from WAT
 * with a placeholder of that length, whose bytes each image replaces (a data segment's bytes are data).
 */
function images(count) {
  const dataAt = 65536;
  const pages = Math.ceil((dataAt + IMAGE_SIZE) / 65536) + 1;
  const wat = `(module
    (memory (export "memory") ${pages})
    (global $next (mut i32) (i32.const ${(pages - 1) * 65536}))
    (data (i32.const 16) "{\\"ok\\":true}")
    (data (i32.const ${dataAt}) "${'x'.repeat(IMAGE_SIZE)}")
    (func (export "berm_alloc") (param $len i32) (result i32) (local $ptr i32)
      (local.set $ptr (global.get $next))
      (global.set $next (i32.add (local.get $ptr) (local.get $len)))
      (local.get $ptr))
    (func (export "berm_tool_echo") (param i32 i32) (result i64)
      (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 11))))`;
  const template = Buffer.from(wat2wasm(wat));
  const at = template.indexOf(Buffer.alloc(IMAGE_SIZE, 'x'));
  if (at < 0) throw new Error("the placeholder is not in the compiled module's data segment");
  return Array.from({ length: count }, () => {
    const bytes = Buffer.from(template);
    randomBytes(IMAGE_SIZE).copy(bytes, at);
    return writeManifestSection(bytes, manifest(['echo']));
  });
}

/** Bytes allocated on disk under `dir`, each file (inode) counted once. */
async function diskBytes(dir) {
  const seen = new Set();
  let total = 0;
  const walk = async (d) => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      const st = await lstat(p);
      if (entry.isDirectory()) await walk(p);
      if (seen.has(st.ino)) continue;
      seen.add(st.ino);
      total += st.blocks * 512;
    }
  };
  await walk(dir);
  return total;
}

async function sql(url, text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** pg_total_relation_size of bermd's tables (berm_*), TOAST and indexes included. */
async function tableBytes(url) {
  const rows = await sql(
    url,
    "SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint AS n FROM pg_class WHERE relkind = 'r' AND relname LIKE 'berm\\_%'",
  );
  return Number(rows[0].n);
}

/** Deploys every image in turn as `h`, running `after` after each; answers the size `measure` reads after the first and after the last. */
async function deployAll(d, all, measure, after = async () => {}) {
  await put(`${d.url}/harnesses/h`, all[0]);
  await after();
  const first = await measure();
  for (const bytes of all.slice(1)) {
    await put(`${d.url}/harnesses/h`, bytes);
    await after();
  }
  return { first, last: await measure() };
}

const all = images(DEPLOYS);
const rows = [];
let server;
/** A bermd with `args`, stopped once `work` is done with it, whatever happens. */
async function withBermd(args, options, work) {
  const d = await startBermd(args, options);
  try {
    return await work(d);
  } finally {
    await d.stop();
  }
}
try {
  for (const keep of KEEP) {
    // Measured before the stop, which removes the state directory.
    const { first, last } = await withBermd(['--keep-images', String(keep)], {}, (d) => deployAll(d, all, () => diskBytes(d.stateDir)));
    rows.push({ store: 'directory', keep, what: 'on disk', first, last });
  }

  try {
    server = await startPostgres();
  } catch (e) {
    console.log(`PostgreSQL skipped: ${e.message.split('\n')[0]}`);
  }
  if (server !== undefined) {
    await sql(server.url, 'ALTER SYSTEM SET autovacuum = off');
    await sql(server.url, 'SELECT pg_reload_conf()');
    const database = async (name) => {
      await sql(server.url, `CREATE DATABASE ${name}`);
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      return url.href;
    };
    for (const keep of KEEP) {
      const url = await database(`bench_keep_${keep}`);
      const { first, last } = await withBermd(['--keep-images', String(keep)], { store: url }, (d) =>
        deployAll(d, all, () => tableBytes(url)),
      );
      rows.push({ store: 'PostgreSQL', keep, what: 'no vacuum', first, last });
      await sql(url, 'VACUUM FULL');
      rows.push({ store: 'PostgreSQL', keep, what: 'then VACUUM FULL', first, last: await tableBytes(url) });

      const vacuumed = await database(`bench_keep_${keep}_vacuumed`);
      const each = await withBermd(['--keep-images', String(keep)], { store: vacuumed }, (d) =>
        deployAll(
          d,
          all,
          () => tableBytes(vacuumed),
          () => sql(vacuumed, 'VACUUM'),
        ),
      );
      rows.push({ store: 'PostgreSQL', keep, what: 'VACUUM each deploy', ...each });
    }
  }

  const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`.padStart(12);
  const image = all[0].length;
  console.log(
    `node ${process.version}, ${DEPLOYS} deploys of one harness, each a distinct image of ${mib(image).trim()} (${image} bytes)\n`,
  );
  console.log(
    `${'store'.padEnd(12)} ${'keep'.padStart(4)}  ${'measured'.padEnd(18)} ${'1 deploy'.padStart(12)} ${`${DEPLOYS} deploys`.padStart(12)} ${'ratio'.padStart(7)} ${'images'.padStart(7)}`,
  );
  for (const r of rows)
    console.log(
      `${r.store.padEnd(12)} ${String(r.keep).padStart(4)}  ${r.what.padEnd(18)} ${mib(r.first)} ${mib(r.last)} ${(r.last / r.first).toFixed(2).padStart(7)} ${(r.last / image).toFixed(2).padStart(7)}`,
    );
  console.log(`\nratio: the size after ${DEPLOYS} deploys over the size after the first; images: that size in images of this size`);
} finally {
  await server?.remove();
  closeAgent();
}
