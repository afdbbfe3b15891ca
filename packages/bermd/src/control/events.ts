/**
 * `GET /events`: the deployed set's changes as Server-Sent Events, so a page (or `curl -N`) follows
 * deploys and undeploys made anywhere without polling. Each change is one event named by its type,
 * whose `data` is the protocol's `HarnessChange`. The stream says nothing of what is deployed: a
 * client lists `GET /harnesses` once its stream is open, and every change after that reaches it.
 */
import type { FastifyInstance } from 'fastify';
import { SCOPE, type HarnessChange } from '@berm/protocol';
import { needs } from '../app/index.js';
import type { ChangeEvent, Registry } from '../deploy/index.js';
import type { EventStreams } from './event-stream.js';

export const EVENTS_PATH = '/events';

function changeOf(event: ChangeEvent): HarnessChange {
  return event.kind === 'deployed'
    ? { type: 'deployed', name: event.name, replaced: event.replaced }
    : { type: 'undeployed', name: event.name };
}

function frame(change: HarnessChange): string {
  return `event: ${change.type}\ndata: ${JSON.stringify(change)}\n\n`;
}

/** Adds `GET /events` over `registry`'s changes to the control plugin, among `streams`. */
export function addChangeStream(app: FastifyInstance, registry: Registry, streams: EventStreams): void {
  app.get(EVENTS_PATH, { config: { access: needs(SCOPE.read) } }, async (request, reply) => {
    let unsubscribe = (): void => {};
    const res = streams.accept(request, reply, 'change', () => unsubscribe());
    if (res === undefined) return reply;
    // Subscribed before the first byte goes out: a client that lists the harnesses once it reads it misses nothing.
    unsubscribe = registry.onChange((event) => res.write(frame(changeOf(event))));
    res.write(': subscribed\n\n');
  });
}
