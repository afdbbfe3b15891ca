// Debian's docker-registry (the distribution registry) for the tests: a temp config on a loopback port with
// storage in a temp dir, with or without htpasswd auth, ready once it logs that it listens (a bounded wait
// on that line, never a sleep); and a relay in front of it that counts requests, can alter a blob's bytes,
// ignore Range, or stand for a registry behind the token flow (a bearer challenge and a token endpoint).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe } from 'vitest';

function find(program: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export const REGISTRY = find('docker-registry');
export const SKOPEO = find('skopeo');
export const HTPASSWD = find('htpasswd');
const present = REGISTRY !== null && SKOPEO !== null && HTPASSWD !== null;

/** `describe`, skipped without docker-registry, skopeo and htpasswd, unless BERM_REQUIRE_REGISTRY=1 (CI), which fails instead. */
export const describeRegistry = (name: string, ...rest: unknown[]): void => {
  if (!present && process.env.BERM_REQUIRE_REGISTRY === '1')
    throw new Error('BERM_REQUIRE_REGISTRY=1, and docker-registry, skopeo or htpasswd is missing');
  const run = present ? describe : describe.skip;
  (run as (n: string, ...r: unknown[]) => void)(present ? name : `${name} (skipped: no docker-registry, skopeo or htpasswd here)`, ...rest);
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningRegistry {
  /** `127.0.0.1:PORT`. */
  host: string;
  port: number;
  dir: string;
  /** What it logged, for the access log. */
  log(): string;
  stop(): Promise<void>;
}

export interface RegistryOptions {
  /** Users and passwords for htpasswd (basic) auth; anonymous when absent. */
  users?: Record<string, string>;
}

export async function startRegistry(options: RegistryOptions = {}): Promise<RunningRegistry> {
  const dir = await mkdtemp(path.join(tmpdir(), 'berm-registry-'));
  const port = await freePort();
  const lines = [
    'version: 0.1',
    'log:',
    '  level: info',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${path.join(dir, 'data')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: 127.0.0.1:${port}`,
  ];
  if (options.users !== undefined) {
    const file = path.join(dir, 'htpasswd');
    await writeFile(file, '');
    for (const [user, password] of Object.entries(options.users))
      execFileSync(HTPASSWD!, ['-bB', file, user, password], { stdio: 'ignore' });
    lines.push('auth:', '  htpasswd:', '    realm: berm-test', `    path: ${file}`);
  }
  const config = path.join(dir, 'config.yml');
  await writeFile(config, `${lines.join('\n')}\n`);
  const child: ChildProcess = spawn(REGISTRY!, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`docker-registry did not say it listens on ${port} within 20 s:\n${log}`)), 20_000);
    const onData = (b: Buffer) => {
      log += b.toString();
      if (log.includes(`listening on 127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`docker-registry exited (${code}) before listening:\n${log}`));
    });
  });
  await ready;
  return {
    host: `127.0.0.1:${port}`,
    port,
    dir,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface RelayOptions {
  /** Flip the last byte of every blob answer whose digest is this one. */
  alterBlob?: string;
  /** Drop the Range header, as a registry that does not honour it. */
  ignoreRange?: boolean;
  /** Stand for a token-auth registry: a Bearer challenge, and a token endpoint (`/token`) taking these users by basic auth. */
  bearer?: Record<string, string>;
  /** Awaited before a request is passed on: a test's step between two of the client's requests. */
  before?: (method: string, path: string) => Promise<void>;
}

export interface Relay {
  host: string;
  /** Every request passed on: `METHOD PATH` (no query), in order, and their Range headers. */
  requests: { method: string; path: string; range?: string; authorization?: string }[];
  /** Token requests the token endpoint answered, with the scope asked for. */
  tokens: { user: string | null; scope: string | null }[];
  close(): Promise<void>;
}

/** An HTTP relay on loopback in front of `upstream` (`127.0.0.1:PORT`). */
export async function startRelay(upstream: string, options: RelayOptions = {}): Promise<Relay> {
  const requests: Relay['requests'] = [];
  const tokens: Relay['tokens'] = [];
  const issued = new Set<string>();
  let self = '';
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    if (options.bearer !== undefined && url.pathname === '/token') {
      const auth = req.headers.authorization;
      let user: string | null = null;
      if (auth?.startsWith('Basic ')) {
        const [u, ...p] = Buffer.from(auth.slice(6), 'base64').toString().split(':');
        if (options.bearer[u!] !== p.join(':')) {
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'wrong user or password' }] }));
          return;
        }
        user = u!;
      }
      tokens.push({ user, scope: url.searchParams.get('scope') });
      const token = randomBytes(16).toString('hex');
      if (user !== null) issued.add(token);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
      return;
    }
    requests.push({ method: req.method ?? '', path: url.pathname, range: req.headers.range, authorization: req.headers.authorization });
    if (options.bearer !== undefined) {
      const auth = req.headers.authorization ?? '';
      if (!(auth.startsWith('Bearer ') && issued.has(auth.slice(7)))) {
        const repo = /^\/v2\/(.+)\/(?:manifests|blobs)\//.exec(url.pathname)?.[1];
        const scope = repo === undefined ? '' : `,scope="repository:${repo}:pull"`;
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="http://${self}/token",service="berm-test"${scope}`,
            'content-type': 'application/json',
          })
          .end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
        return;
      }
    }
    void (options.before ?? (async () => {}))(req.method ?? '', url.pathname).then(() => forward(req, res, url));
  };
  const forward = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const headers = { ...req.headers, host: upstream };
    delete headers.authorization;
    if (options.ignoreRange) delete headers.range;
    const [h, p] = upstream.split(':');
    const out = httpRequest({ host: h, port: Number(p), method: req.method, path: req.url, headers }, (up) => {
      const location = up.headers.location?.replace(`http://${upstream}`, `http://${self}`);
      const alter = options.alterBlob !== undefined && req.method === 'GET' && url.pathname.endsWith(`/blobs/${options.alterBlob}`);
      if (!alter) {
        res.writeHead(up.statusCode ?? 502, { ...up.headers, ...(location ? { location } : {}) });
        up.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.length > 0) body[body.length - 1]! ^= 0xff;
        res.writeHead(up.statusCode ?? 502, up.headers).end(body);
      });
    });
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  };
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    host: self,
    requests,
    tokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A blob of a one-image OCI layout: its media type and bytes. */
export interface LayoutBlob {
  mediaType: string;
  bytes: Uint8Array;
}

/**
 * Writes a one-image OCI layout under `dir` (an image manifest of `config` and `layers`, tagged `tag`) and
 * copies it to `ref` with skopeo: an artifact published as other tools publish it, not as crab does.
 */
export async function skopeoPush(
  dir: string,
  tag: string,
  ref: string,
  image: { config: LayoutBlob; layers: LayoutBlob[] },
): Promise<void> {
  await mkdir(path.join(dir, 'blobs', 'sha256'), { recursive: true });
  const described = async ({ mediaType, bytes }: LayoutBlob) => {
    await writeFile(path.join(dir, 'blobs', 'sha256', sha256(bytes).slice('sha256:'.length)), bytes);
    return { mediaType, digest: sha256(bytes), size: bytes.length };
  };
  const manifest = new TextEncoder().encode(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: await described(image.config),
      layers: await Promise.all(image.layers.map(described)),
    }),
  );
  const entry = await described({ mediaType: 'application/vnd.oci.image.manifest.v1+json', bytes: manifest });
  await writeFile(path.join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  await writeFile(
    path.join(dir, 'index.json'),
    JSON.stringify({ schemaVersion: 2, manifests: [{ ...entry, annotations: { 'org.opencontainers.image.ref.name': tag } }] }),
  );
  await promisify(execFile)(SKOPEO!, ['copy', '--insecure-policy', '--dest-tls-verify=false', `oci:${dir}:${tag}`, `docker://${ref}`]);
}
