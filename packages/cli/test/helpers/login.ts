// `berm login` as a person runs it, without a browser: the command spawned with its own config directory,
// the authorization URL read from what it prints, and the browser's part played over HTTP (the redirects
// followed with the cookies the authorization server sets, as far as the loopback redirect, which is then
// visited as the browser would). Every wait is for a line, an answer or an exit, bounded by the test's own
// timeout; nothing here sleeps.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exited } from '../../../bermd/test/daemon.js';
import { repoRoot } from './cli.js';
import { StderrLines } from './stdio.js';

/** A `berm login` under way. */
export class LoginRun {
  readonly stderr = new StderrLines();
  private stdout = '';
  /** The exit code, once the process has exited and its output is read. */
  readonly exit: Promise<number | string>;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (c: Buffer) => this.stderr.feed(c));
    child.stdout.on('data', (c: Buffer) => (this.stdout += c.toString('utf8')));
    this.exit = exited(child);
  }

  static start(args: string[], env: Record<string, string | undefined>): LoginRun {
    const full: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['BERM_URL', 'BERM_TOKEN', 'NODE_ENV', 'DEBUG']) delete full[name];
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete full[name];
      else full[name] = value;
    }
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'berm'), 'login', ...args], {
      env: full,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new LoginRun(child);
  }

  /** The authorization URL it printed. */
  async authorizationUrl(): Promise<URL> {
    const line = await this.stderr.wait(/^\s+https?:\/\//);
    return new URL(line.trim());
  }

  /** Resolves once it has exited, with what it wrote. */
  async result(): Promise<{ code: number | string; stdout: string; stderr: string }> {
    const code = await this.exit;
    return { code, stdout: this.stdout, stderr: this.stderr.lines.join('\n') };
  }
}

/**
 * The browser's part up to the redirect back: from `authorizationUrl` (as the user's login name, which
 * the test authorization server reads from `login_hint`), follows the server's redirects with its cookies
 * until one points at the loopback callback, and returns that URL unvisited.
 */
export async function approve(authorizationUrl: URL, user: string): Promise<URL> {
  const start = new URL(authorizationUrl);
  start.searchParams.set('login_hint', user);
  const redirect = start.searchParams.get('redirect_uri');
  if (redirect === null) throw new Error(`no redirect_uri in ${start.href}`);
  const callback = new URL(redirect);
  const jar = new Map<string, string>();
  let next = start.href;
  for (let hop = 0; hop < 12; hop++) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const location = response.headers.get('location');
    const body = await response.text();
    if (location === null) throw new Error(`the authorization stopped at ${next} (${response.status}): ${body.slice(0, 300)}`);
    const target = new URL(location, next);
    if (target.origin === callback.origin && target.pathname === callback.pathname) return target;
    next = target.href;
  }
  throw new Error('the authorization did not come back to the redirect URI');
}

/** The browser visiting the redirect back: what berm's loopback listener answers. */
export async function visit(callback: URL): Promise<{ status: number; text: string }> {
  const response = await fetch(callback);
  return { status: response.status, text: await response.text() };
}

/** What `berm login` stored, as the file holds it. */
export async function storedLogins(configHome: string): Promise<{
  logins: Record<string, Record<string, string | undefined>>;
  clients: Record<string, { client_id: string }>;
}> {
  return JSON.parse(await readFile(join(configHome, 'berm', 'logins.json'), 'utf8'));
}

/**
 * bermd's public address in these tests: a reverse proxy on loopback forwarding every request to bermd
 * (as one in front of a deployment does; bermd's `--resource` names it), which can also be told to answer
 * a token with bermd's own 401, standing for a token bermd stops accepting while a client holds it.
 */
export class Front {
  /** bermd's address, once it runs. */
  target?: string;
  /** The `mcp-session-id` of every request forwarded, in order. */
  readonly sessions: string[] = [];
  /** How many requests it refused. */
  refusals = 0;
  private readonly refused = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Front> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const front = new Front(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => {
      const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (token !== undefined && front.refused.has(token)) {
        front.refusals++;
        req.resume();
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
        res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'the bearer token was refused' } }));
        return;
      }
      const session = req.headers['mcp-session-id'];
      if (typeof session === 'string') front.sessions.push(session);
      const upstream = request(new URL(req.url ?? '/', front.target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
    return front;
  }

  /** From now on, requests carrying `token` get bermd's 401. */
  refuse(token: string): void {
    this.refused.add(token);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
