// A private PostgreSQL server for the tests and the benchmarks: initdb in a temporary directory (trust
// authentication, loopback only), started on a free port with its socket in that directory, stopped and
// removed at the end. Run as the `postgres` user when this process is root (CI is), since PostgreSQL
// refuses to run as root. JavaScript, not TypeScript, so bench/ can use it as it is (postgres-server.d.ts
// gives the tests its types).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The role the tests connect as (trust authentication: no password). */
export const POSTGRES_USER = 'berm';

/** The directory holding initdb, pg_ctl and postgres: $BERM_POSTGRES_BIN, the newest Debian install, or PATH's. */
export function postgresBinDir(env = process.env) {
  if (env.BERM_POSTGRES_BIN) return env.BERM_POSTGRES_BIN;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(path.join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return path.join(debian, versions[0], 'bin');
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && existsSync(path.join(dir, 'initdb'))) return dir;
  }
  return undefined;
}

function run(file, args, options) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${path.basename(args.includes('--') ? args[args.indexOf('--') + 1] : file)} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** A port nothing listens on now: one the kernel just handed out and took back. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server; rejects, saying why, when none can be started (no binaries, no `postgres` user to run
 * them as root, initdb or the start failing). The answer's `stop` and `start` stop it and start it again
 * on the same port and data (to take the database away from a running bermd and give it back); `remove`
 * stops it for good and deletes its directory.
 */
export async function startPostgres(options = {}) {
  const bin = options.binDir ?? postgresBinDir();
  if (bin === undefined)
    throw new Error('no PostgreSQL found (no initdb under /usr/lib/postgresql/*/bin or on PATH; set BERM_POSTGRES_BIN)');
  const root = process.getuid?.() === 0;
  let owner;
  if (root) {
    const ids = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]).catch(() => undefined);
    if (ids === undefined) throw new Error('running as root and there is no postgres user to run PostgreSQL as');
    owner = { uid: Number(ids[0]), gid: Number(ids[1]) };
  }
  // As root, under /tmp, which the postgres user can always reach (a TMPDIR of root's own may not be).
  const dir = await mkdtemp(path.join(root ? '/tmp' : os.tmpdir(), 'berm-pg-'));
  if (owner !== undefined) await chown(dir, owner.uid, owner.gid);
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  // As root, each program runs as postgres (runuser, util-linux), in a directory postgres may enter.
  const pg = (program, args) =>
    root
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args], { cwd: dir })
      : run(path.join(bin, program), args, { cwd: dir });
  try {
    await pg('initdb', ['-D', data, '-U', POSTGRES_USER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const port = options.port ?? (await freePort());
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-k ${dir}`,
    // Durability against this machine crashing is not what the tests are about (bermd's is): faster starts and writes.
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=300',
  ].join(' ');
  // pg_ctl -w polls the server until it accepts connections (or -t runs out): no fixed sleep.
  const start = () => pg('pg_ctl', ['-D', data, '-l', logFile, '-o', settings, '-w', '-t', '60', 'start']);
  const stop = (mode = 'fast') => pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  try {
    await start();
    await pg('pg_isready', ['-h', '127.0.0.1', '-p', String(port), '-U', POSTGRES_USER, '-d', 'postgres']);
  } catch (e) {
    const log = await readFile(logFile, 'utf8').catch(() => '');
    await stop('immediate').catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${e.message}${log ? `\nserver log:\n${log}` : ''}`);
  }
  let removed = false;
  return {
    url: `postgres://${POSTGRES_USER}@127.0.0.1:${port}/postgres`,
    port,
    dir,
    start,
    stop,
    async remove() {
      if (removed) return;
      removed = true;
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
