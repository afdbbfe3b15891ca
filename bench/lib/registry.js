// Debian's docker-registry on loopback for the benchmarks, and a relay in front of it that counts what
// crosses it: JavaScript, because bench code cannot import the tests' TypeScript helpers
// (packages/oci/test/registry-server.ts), whose start this follows. Kept out of bench/*.js because
// bench/run.js runs every file there as a benchmark.
//
// Every wait is bounded, and everything started is stopped by what started it:
// - the registry writes a line per request to stderr; its pipes are read for as long as it runs (only
//   the tail kept), since a pipe nobody reads fills and the registry then blocks mid-request;
// - `stop()` sends SIGTERM, waits a bounded time for the exit, then SIGKILL;
// - the relay's `close()` closes its open keep-alive sockets too, which `server.close()` alone waits on.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOG_TAIL = 16 * 1024;

/** The path of `program` on PATH, or null. */
export function find(program) {
  try {
    return execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** A free loopback port, from a listener opened and closed. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits for `promise` at most `ms`, else rejects saying `what`. */
export function within(ms, what, promise) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** docker-registry serving from a temp dir on a loopback port; resolves once it says it listens (20 s at most). */
export async function startRegistry() {
  const program = find('docker-registry');
  if (program === null) throw new Error('docker-registry is not installed (apt-get install docker-registry)');
  const dir = await mkdtemp(join(tmpdir(), 'berm-bench-registry-'));
  const port = await freePort();
  const config = join(dir, 'config.yml');
  await writeFile(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: info',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  const child = spawn(program, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk) => {
    log = (log + chunk.toString()).slice(-LOG_TAIL);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      try {
        await within(5_000, 'docker-registry stopping', exited);
      } catch {
        child.kill('SIGKILL');
        await within(5_000, 'docker-registry being killed', exited);
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await within(
      20_000,
      `docker-registry saying it listens on ${port}`,
      new Promise((resolve, reject) => {
        const look = () => {
          if (log.includes(`listening on 127.0.0.1:${port}`)) resolve();
        };
        child.stdout.on('data', look);
        child.stderr.on('data', look);
        child.once('exit', (code) => reject(new Error(`docker-registry exited (${code}) before listening:\n${log}`)));
      }),
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { host: `127.0.0.1:${port}`, log: () => log, stop };
}

/**
 * An HTTP relay on loopback in front of `upstream` (`127.0.0.1:PORT`) counting what it carries: requests,
 * and the bytes of request and response bodies. `reset()` starts a new count.
 */
export async function startCountingRelay(upstream) {
  const [upHost, upPort] = upstream.split(':');
  let count = { requests: 0, sent: 0, received: 0 };
  let self = '';
  const server = createServer((req, res) => {
    count.requests++;
    const out = httpRequest(
      { host: upHost, port: Number(upPort), method: req.method, path: req.url, headers: { ...req.headers, host: upstream } },
      (up) => {
        const location = up.headers.location?.replace(`http://${upstream}`, `http://${self}`);
        res.writeHead(up.statusCode ?? 502, { ...up.headers, ...(location ? { location } : {}) });
        up.on('data', (chunk) => {
          count.received += chunk.length;
        });
        up.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.on('data', (chunk) => {
      count.sent += chunk.length;
    });
    req.pipe(out);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `127.0.0.1:${server.address().port}`;
  return {
    host: self,
    reset() {
      const was = count;
      count = { requests: 0, sent: 0, received: 0 };
      return was;
    },
    close: () =>
      within(
        5_000,
        'the relay closing',
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
      ),
  };
}
