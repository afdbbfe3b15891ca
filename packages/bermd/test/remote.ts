// Loopback stand-ins for the hosts harnesses reach: an HTTP server that records every request it
// receives (and lets a test wait for one), and a forward proxy that records what it was asked to reach.
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Resolves when the client's side of this request goes away before an answer was sent (it was aborted). */
  aborted: Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

/** A remote host on 127.0.0.1: routes by path, records every request, and lets a test await the n-th. */
export class RemoteHost {
  readonly seen: SeenRequest[] = [];
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];
  private readonly routes = new Map<string, Handler>();
  private readonly held = new Set<ServerResponse>();

  private constructor(private readonly server: Server) {}

  /** Listens on `address` (127.0.0.1) and `port` (one the kernel picks); a URL without a port needs port 80. */
  static async start(at: { address?: string; port?: number } = {}): Promise<RemoteHost> {
    const server = createServer();
    const host = new RemoteHost(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => host.onRequest(req, res));
    server.listen(at.port ?? 0, at.address ?? '127.0.0.1');
    await once(server, 'listening');
    return host;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Answers `path` with `handler`; unrouted paths answer 404. */
  route(path: string, handler: Handler): this {
    this.routes.set(path, handler);
    return this;
  }

  /** Answers `path` by not answering (the request stays open) until `release`, or the test's end. */
  hold(path: string): this {
    return this.route(path, (_req, res) => {
      this.held.add(res);
    });
  }

  /** Answers every request held open so far with `body`. */
  release(body: string): void {
    for (const res of this.held) if (!res.destroyed) res.end(body);
    this.held.clear();
  }

  /** Resolves once `count` requests have arrived in all. */
  received(count: number): Promise<void> {
    if (this.seen.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let markAborted!: () => void;
      const aborted = new Promise<void>((resolve) => (markAborted = resolve));
      res.once('close', () => {
        if (!res.writableFinished) markAborted();
      });
      const seen: SeenRequest = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        aborted,
      };
      this.seen.push(seen);
      for (const w of [...this.waiters]) {
        if (this.seen.length >= w.count) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      const handler = this.routes.get(new URL(req.url!, 'http://x').pathname);
      if (handler === undefined) {
        res.statusCode = 404;
        res.end('no such route');
      } else {
        handler(req, res, seen);
      }
    });
  }
}

export interface ProxyVisit {
  /** `CONNECT` (a tunnel) or the method of an absolute-form request. */
  method: string;
  /** The authority asked for (`host:port`) or the absolute URL. */
  target: string;
}

/**
 * A forward proxy, as small as it gets: CONNECT tunnels and absolute-form requests, both followed. The
 * names it is asked for are resolved through `hosts` (name:port → port on 127.0.0.1): the proxy, not
 * the daemon, resolves the names a proxied request reaches.
 */
export class ForwardProxy {
  readonly visits: ProxyVisit[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly hosts: Map<string, number>,
  ) {}

  static async start(hosts: Record<string, number>): Promise<ForwardProxy> {
    const server = createServer();
    const proxy = new ForwardProxy(server, new Map(Object.entries(hosts)));
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => proxy.onConnect(req, client, head));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.onRequest(req, res));
    server.on('connection', (s: Socket) => {
      proxy.sockets.add(s);
      s.once('close', () => proxy.sockets.delete(s));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  private onConnect(req: IncomingMessage, client: Socket, head: Buffer): void {
    this.visits.push({ method: 'CONNECT', target: req.url! });
    const port = this.hosts.get(req.url!.toLowerCase());
    if (port === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = netConnect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.once('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.visits.push({ method: req.method!, target: req.url! });
    let target: URL;
    try {
      target = new URL(req.url!);
    } catch {
      res.writeHead(400).end('absolute-form requests only');
      return;
    }
    const port = this.hosts.get(target.host.toLowerCase());
    if (port === undefined) {
      res.writeHead(502).end('unknown host');
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: `${target.pathname}${target.search}`, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
