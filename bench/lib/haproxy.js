// Debian's HAProxy in front of bermd replicas for the benchmarks: plain round robin per request, no
// affinity, on loopback ports, in the foreground. Null from `haproxyPath` when the machine has none.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export function haproxyPath() {
  try {
    return execFileSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const accepts = (port) =>
  new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** HAProxy at `bin` in front of `upstreams` (loopback ports); resolves once it accepts connections. */
export async function startHaproxy(bin, upstreams) {
  const dir = await mkdtemp(join(tmpdir(), 'berm-bench-haproxy-'));
  const port = await freePort();
  const file = join(dir, 'haproxy.cfg');
  const config = [
    'global',
    '  maxconn 1024',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    ...upstreams.map((p, i) => `  server r${i} 127.0.0.1:${p}`),
    '',
  ];
  await writeFile(file, config.join('\n'));
  const child = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not start: ${stderr}`);
    }
    await delay(20);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
