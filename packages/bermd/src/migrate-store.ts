/**
 * `bermd migrate-store --from DIR --to URL`: the process that moves a directory store into PostgreSQL
 * (the moving itself is deploy/move-store.ts). It prints one line per harness on stdout and a summary;
 * a bad option exits 2, a store that cannot be opened or a harness that cannot be moved exits 1.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { DirectoryStore, moveStore, PostgresStore, reasonOf, storeLocation, storePasswords, type MovedHarness } from './deploy/index.js';
import { isBermdError } from './errors.js';
import { Secrets } from './egress/index.js';
import { stderrLogger } from './log.js';
import { printable } from './terminal-text.js';
import { MIGRATE_USAGE, OptionsError, parseMigrateOptions, type MigrateStoreOptions } from './options.js';

const SAID: Record<MovedHarness['outcome'], string> = {
  moved: 'moved',
  'already-there': 'skipped, the database already holds this image under the name',
  'held-elsewise': 'skipped, the database holds another image under the name (left as it is)',
  unreadable: 'not moved, its image does not read',
};

export async function migrateStore(argv: string[]): Promise<void> {
  let options: MigrateStoreOptions | 'help';
  try {
    options = parseMigrateOptions(argv);
  } catch (e) {
    if (!(e instanceof OptionsError)) throw e;
    process.stderr.write(`bermd migrate-store: ${e.message}\n${MIGRATE_USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    process.stdout.write(`${MIGRATE_USAGE}\n`);
    return;
  }
  const hiding = Secrets.none();
  for (const password of storePasswords(options.to)) hiding.hide('store password', password);
  const logger = stderrLogger('warn', hiding);
  const fail = (message: string, code: number): void => {
    process.stderr.write(`bermd migrate-store: ${printable(hiding.redact(message))}\n`);
    process.exitCode = code;
  };

  // Opening a directory store creates it: a mistyped --from must not pass as an empty set.
  const harnesses = path.join(options.from, 'harnesses');
  if (
    !(await stat(harnesses).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    fail(`--from ${options.from}: no deployed set there (no harnesses/ directory)`, 2);
    return;
  }
  const location = storeLocation(options.to);
  let to: PostgresStore;
  try {
    to = await PostgresStore.open(options.to, { logger });
  } catch (e) {
    fail(isBermdError(e) ? e.message : `cannot open the store ${location}: ${reasonOf(e)}`, 1);
    return;
  }
  const from = await DirectoryStore.open(options.from);
  try {
    const report = await moveStore(from, to);
    // A reason can quote an image's own text (its manifest's words, a compile error's): escaped as on stderr.
    for (const h of report)
      process.stdout.write(`${h.name} ${h.digest}: ${SAID[h.outcome]}${h.reason === undefined ? '' : ` (${printable(h.reason)})`}\n`);
    const moved = report.filter((h) => h.outcome === 'moved').length;
    const failed = report.filter((h) => h.outcome === 'unreadable').length;
    process.stdout.write(`moved ${moved} of ${report.length} harnesses from ${options.from} to ${location}\n`);
    if (failed > 0) process.exitCode = 1;
  } catch (e) {
    fail(
      `moving to ${location} stopped: ${isBermdError(e) ? e.message : reasonOf(e)} (what was moved stays; run it again to move the rest)`,
      1,
    );
  } finally {
    await to.close();
    await from.close();
  }
}
