// Debian's HAProxy in front of bermd replicas for the tests: a config written on loopback ports, plain
// round robin with no affinity, run in the foreground (`haproxy -db -f FILE`), ready once its port
// accepts a connection (a bounded wait on that event, never a sleep). Its runtime API, on a socket in its
// own directory, adds a replica started after it (`addServer`), as an operator scales a backend out.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe } from 'vitest';
import { exited, tempDir, removeDir } from './daemon.js';
import { until, within } from './replicas.js';

function findHaproxy(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The haproxy binary; null when the machine has none. */
export const HAPROXY = findHaproxy();

/** `describe`, skipped when the machine has no haproxy, unless BERM_REQUIRE_HAPROXY=1 (CI), which fails instead. */
export const describeHaproxy = (name: string, ...rest: unknown[]): void => {
  if (HAPROXY === null && process.env.BERM_REQUIRE_HAPROXY === '1') throw new Error('BERM_REQUIRE_HAPROXY=1, and there is no haproxy');
  const run = HAPROXY === null ? describe.skip : describe;
  (run as (n: string, ...r: unknown[]) => void)(HAPROXY === null ? `${name} (skipped: no haproxy on this machine)` : name, ...rest);
};

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepts(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(undefined));
  });
}

/**
 * The balancer's config: per request round robin, no affinity. A replica that stops is marked down by
 * its health check; a request that could not reach one (refused, or answered 503 while it shuts down,
 * having run nothing) is sent to the other (`retry-on`, `redispatch`), as a balancer in production is set.
 */
export function haproxyConfig(port: number, upstreams: readonly number[], adminSocket?: string): string {
  return [
    'global',
    '  maxconn 256',
    ...(adminSocket === undefined ? [] : [`  stats socket ${adminSocket} mode 600 level admin`]),
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  retries 3',
    '  option redispatch 1',
    '  option http-buffer-request',
    '  retry-on conn-failure empty-response 503',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    ...upstreams.map((p, i) => `  server r${i} 127.0.0.1:${p} check inter 200ms fall 1 rise 1`),
    '',
  ].join('\n');
}

export interface Balancer {
  url: string;
  stderr(): string;
  /**
   * Adds a server `name` on loopback `port` to the backend at run time and puts it in rotation, resolving
   * once HAProxy has answered both commands (the next request in rotation may reach it). No health check:
   * the server is meant to be listening already.
   */
  addServer(name: string, port: number): Promise<void>;
  close(): Promise<void>;
}

/** One command on HAProxy's runtime API at `socket`, answered as HAProxy's whole reply. */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let reply = '';
    const conn = net.connect(socket);
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (reply += chunk));
    conn.once('error', reject);
    // Without `prompt`, HAProxy answers one command and closes the connection.
    conn.once('end', () => resolve(reply));
    conn.end(`${command}\n`);
  });
}

/** Starts haproxy in front of `upstreams` (loopback ports), resolving once it accepts connections. */
export async function startHaproxy(upstreams: readonly number[]): Promise<Balancer> {
  const dir = await tempDir('bermd-haproxy-');
  const port = await freePort();
  const file = path.join(dir, 'haproxy.cfg');
  const admin = path.join(dir, 'admin.sock');
  await writeFile(file, haproxyConfig(port, upstreams, admin));
  const child: ChildProcess = spawn(HAPROXY!, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.resume();
  const stop = async (): Promise<void> => {
    const done = exited(child);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await done;
    await removeDir(dir);
  };
  try {
    await until('haproxy to accept connections', async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
      return accepts(port);
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const addServer = async (name: string, upstream: number): Promise<void> => {
    // `add server` answers "New server registered." and leaves the server in maintenance until enabled.
    const added = await within('haproxy to add a server', runtimeCommand(admin, `add server replicas/${name} 127.0.0.1:${upstream}`));
    if (!/New server registered/.test(added)) throw new Error(`haproxy refused to add ${name}: ${added.trim()}`);
    const enabled = await within('haproxy to enable a server', runtimeCommand(admin, `enable server replicas/${name}`));
    if (enabled.trim() !== '') throw new Error(`haproxy refused to enable ${name}: ${enabled.trim()}`);
  };
  return { url: `http://127.0.0.1:${port}`, stderr: () => stderr, addServer, close: stop };
}
