/**
 * `GET /events`: the deployed set's changes as Server-Sent Events, so a page (or `curl -N`) follows
 * deploys and undeploys made anywhere without polling. Each change is one event whose `data` is
 * `{"type": "deployed" | "undeployed", "name": ...}` (a deploy adds `replaced`). The stream says
 * nothing of what is deployed: a client lists `GET /harnesses` once its stream is open, and
 * every change after that reaches it.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ChangeEvent, Registry } from './registry.js';

export const EVENTS_PATH = '/events';

/** A comment line at this interval keeps proxies and idle timers from closing a quiet stream (the MCP transport's interval). */
const KEEP_ALIVE_MS = 15_000;

export interface EventRoutesOptions {
  registry: Registry;
}

export type ChangeMessage = { type: 'deployed'; name: string; replaced: boolean } | { type: 'undeployed'; name: string };

function messageOf(event: ChangeEvent): ChangeMessage {
  return event.kind === 'deployed' ? { type: 'deployed', name: event.name, replaced: event.replaced } : { type: 'undeployed', name: event.name };
}

function frame(message: ChangeMessage): string {
  return `event: ${message.type}\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * Registers `GET /events` over `registry`'s changes, on the app itself like the other control routes,
 * so that its `preClose` hook is the app's and ends the streams before the server waits on their
 * connections (registered inside an encapsulated plugin, a stopping bermd was measured to hang on them).
 */
export function registerEventRoutes(app: FastifyInstance, { registry }: EventRoutesOptions): void {
  const open = new Set<ServerResponse>();

  // A stream never ends by itself: closing the app ends them, or it would wait on them forever.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.get(EVENTS_PATH, async (request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      // The connection is the stream's alone: when the stream ends (bermd stopping), so does the connection,
      // rather than lingering as an idle keep-alive one that a stopping server would wait on.
      connection: 'close',
    });
    // Subscribed before the first byte goes out: a client that lists the harnesses once it reads it misses nothing.
    const unsubscribe = registry.onChange((event) => res.write(frame(messageOf(event))));
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    open.add(res);
    res.once('close', () => {
      unsubscribe();
      clearInterval(keepAlive);
      open.delete(res);
    });
    res.write(': subscribed\n\n');
    request.log.debug('change stream opened');
  });
}
