/**
 * `GET /events`: the deployed set's changes as Server-Sent Events, so a page (or `curl -N`) follows
 * deploys and undeploys made anywhere without polling. Each change is one event named by its type,
 * whose `data` is the protocol's `HarnessChange`. The stream says nothing of what is deployed: a
 * client lists `GET /harnesses` once its stream is open, and every change after that reaches it.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { HarnessChange } from '@berm/protocol';
import type { ChangeEvent, Registry } from '../deploy/index.js';

export const EVENTS_PATH = '/events';

/** A comment line at this interval keeps proxies and idle timers from closing a quiet stream (the MCP transport's interval). */
const KEEP_ALIVE_MS = 15_000;

function changeOf(event: ChangeEvent): HarnessChange {
  return event.kind === 'deployed'
    ? { type: 'deployed', name: event.name, replaced: event.replaced }
    : { type: 'undeployed', name: event.name };
}

function frame(change: HarnessChange): string {
  return `event: ${change.type}\ndata: ${JSON.stringify(change)}\n\n`;
}

/** Adds `GET /events` over `registry`'s changes to the control plugin. */
export function addChangeStream(app: FastifyInstance, registry: Registry): void {
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
    });
    // Subscribed before the first byte goes out: a client that lists the harnesses once it reads it misses nothing.
    const unsubscribe = registry.onChange((event) => res.write(frame(changeOf(event))));
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    open.add(res);
    // The response closes when the client goes away (its connection closed) and when the stream is ended.
    res.once('close', () => {
      unsubscribe();
      clearInterval(keepAlive);
      open.delete(res);
    });
    res.write(': subscribed\n\n');
    request.log.debug('change stream opened');
  });
}
