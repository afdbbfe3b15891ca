/**
 * `GET /events`: the deployed set's changes as Server-Sent Events, so a page (or `curl -N`) follows
 * deploys and undeploys made anywhere without polling. Each change is one event named by its type,
 * whose `data` is the protocol's `HarnessChange`. The stream says nothing of what is deployed: a
 * client lists `GET /harnesses` once its stream is open, and every change after that reaches it.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { SCOPE, type HarnessChange } from '@berm/protocol';
import { keepAlive, needs, SSE_KEEP_ALIVE_MS } from '../app/index.js';
import type { ChangeEvent, Registry } from '../deploy/index.js';
import { BermdError } from '../errors.js';
import { numberDefault } from '../limits.js';

export const EVENTS_PATH = '/events';

/**
 * The most `/events` streams open at once (the default of `--max-event-streams`, as `--max-listens`'s):
 * each holds a connection, a subscription to the registry and a timer for as long as its client likes.
 */
export const MAX_EVENT_STREAMS = numberDefault('max-event-streams');

function changeOf(event: ChangeEvent): HarnessChange {
  return event.kind === 'deployed'
    ? { type: 'deployed', name: event.name, replaced: event.replaced }
    : { type: 'undeployed', name: event.name };
}

function frame(change: HarnessChange): string {
  return `event: ${change.type}\ndata: ${JSON.stringify(change)}\n\n`;
}

/** The refusal of one stream more than `cap`. */
function capError(cap: number): BermdError {
  return new BermdError(
    'event-stream-cap',
    `bermd is at its cap of ${cap} open event streams (--max-event-streams); close one, or start bermd with a higher --max-event-streams`,
    { cap },
  );
}

/**
 * Adds `GET /events` over `registry`'s changes to the control plugin, holding at most `maxStreams` open,
 * each kept alive every `keepAliveMs` (app/keep-alive.ts).
 */
export function addChangeStream(
  app: FastifyInstance,
  registry: Registry,
  maxStreams = MAX_EVENT_STREAMS,
  keepAliveMs = SSE_KEEP_ALIVE_MS,
): void {
  const open = new Set<ServerResponse>();

  // A stream never ends by itself: closing the app ends them, or it would wait on them forever.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.get(EVENTS_PATH, { config: { access: needs(SCOPE.read) } }, async (request, reply) => {
    // Counted and added with no await between, so concurrent requests cannot all pass the check.
    if (open.size >= maxStreams) {
      const refused = capError(maxStreams);
      // Answered here rather than thrown: the error handler logs every 5xx as bermd's own failure, and this is a client's.
      request.log.warn({ cap: maxStreams }, 'an event stream refused: at the cap (--max-event-streams)');
      return reply.code(refused.status).send(refused.toBody());
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // Subscribed before the first byte goes out: a client that lists the harnesses once it reads it misses nothing.
    const unsubscribe = registry.onChange((event) => res.write(frame(changeOf(event))));
    const keeping = keepAlive(res, keepAliveMs);
    open.add(res);
    // The response closes when the client goes away (its connection closed) and when the stream is ended.
    res.once('close', () => {
      unsubscribe();
      clearInterval(keeping);
      open.delete(res);
      request.log.debug({ open: open.size }, 'change stream closed');
    });
    res.write(': subscribed\n\n');
    request.log.debug({ open: open.size }, 'change stream opened');
  });
}
