// A TCP relay between bermd and PostgreSQL, for the faults a clean server stop never produces: a path
// that goes silent (every byte held, both sockets left open, as a stalled network leaves them), and one
// kind of connection kept out (its startup message names it: bermd's listening connection is
// `bermd-listen`) while the others pass.
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  /** The port bermd connects to, on 127.0.0.1. */
  port: number;
  /** `url` (a database on the relayed server) reached through the relay. */
  through(url: string): string;
  /** Stops forwarding in both directions, on every connection and on those opened meanwhile; closes nothing. */
  silence(): void;
  /** Forwards again, what was held first. */
  resume(): void;
  /** Connections whose startup message says `application_name` is `name` are closed as soon as it is read, until `admit`. */
  refuse(name: string): void;
  admit(name: string): void;
  /** The local ports of the relay's connections to the server for connections named `name` (pg_stat_activity's `client_port`). */
  upstreamPorts(name: string): number[];
  /** Closes the listening socket and every connection. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server?: Socket;
  name?: string;
  /** Reading the startup message, connecting to the server with it, or forwarding both ways. */
  state: 'head' | 'connecting' | 'open';
}

/** The protocol version a StartupMessage carries (3.0); an SSLRequest or a cancel request carry other codes. */
const PROTOCOL_3 = 196608;

/** `application_name` from a StartupMessage (length, version, then NUL-terminated key/value pairs), if it is one. */
function applicationName(packet: Buffer): string | undefined {
  if (packet.length < 8 || packet.readInt32BE(4) !== PROTOCOL_3) return undefined;
  const fields = packet.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'application_name') return fields[i + 1];
  return undefined;
}

/** Starts a relay on a free loopback port to the server `target` names. */
export async function startRelay(target: string): Promise<Relay> {
  const upstream = new URL(target);
  const pairs = new Set<Pair>();
  const refused = new Set<string>();
  let silent = false;

  // While silent, a socket is paused rather than read: its bytes wait in the kernel's buffers, and its
  // end (or reset) is not seen until it is read again, as a stalled path would deliver them.
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk) => {
      to.write(chunk);
    });
    from.on('end', () => to.end());
    from.on('close', () => to.destroy());
    from.on('error', () => {});
    if (silent) from.pause();
  };

  const server: Server = createServer((client) => {
    const pair: Pair = { client, state: 'head' };
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
    client.on('error', () => {});
    let head = Buffer.alloc(0);
    // The first message, whole, decides whether the connection is let through; it is then sent on as read.
    const readHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      if (head.length < 4 || head.length < head.readInt32BE(0)) return;
      client.off('data', readHead);
      client.pause();
      pair.name = applicationName(head);
      if (pair.name !== undefined && refused.has(pair.name)) {
        client.destroy();
        return;
      }
      pair.state = 'connecting';
      const s = createConnection(Number(upstream.port || 5432), upstream.hostname, () => {
        s.write(head);
        forward(client, s);
        forward(s, client);
        pair.state = 'open';
        if (!silent) client.resume();
      });
      pair.server = s;
      s.on('error', () => client.destroy());
    };
    client.on('data', readHead);
    if (silent) client.pause();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;

  return {
    port: bound,
    through(url) {
      const u = new URL(url);
      u.host = `127.0.0.1:${bound}`;
      return u.href;
    },
    silence() {
      silent = true;
      for (const p of pairs) {
        p.client.pause();
        p.server?.pause();
      }
    },
    resume() {
      silent = false;
      for (const p of pairs) {
        // A connection still connecting has no reader yet: it is resumed once connected.
        if (p.state === 'connecting') continue;
        p.client.resume();
        p.server?.resume();
      }
    },
    refuse(name) {
      refused.add(name);
    },
    admit(name) {
      refused.delete(name);
    },
    upstreamPorts(name) {
      return [...pairs].flatMap((p) => (p.name === name && p.server?.localPort !== undefined ? [p.server.localPort] : []));
    },
    async close() {
      for (const p of pairs) {
        p.client.destroy();
        p.server?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
