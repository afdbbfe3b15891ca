/**
 * What every Server-Sent Events stream of the control API shares (`GET /events`, `GET /figures/events`):
 * one cap on how many are open at once, counted over both (`--max-event-streams`: each holds a
 * connection and a timer for as long as its client likes, whichever it follows), the headers, the
 * keep-alive (app/keep-alive.ts), and their end when the app closes.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keepAlive, SSE_KEEP_ALIVE_MS } from '../app/index.js';
import { BermdError } from '../errors.js';
import { numberDefault } from '../limits.js';

/**
 * The most control streams open at once (the default of `--max-event-streams`, as `--max-listens`'s):
 * `/events` and `/figures/events` together.
 */
export const MAX_EVENT_STREAMS = numberDefault('max-event-streams');

/** The refusal of one stream more than `cap`. */
function capError(cap: number): BermdError {
  return new BermdError(
    'event-stream-cap',
    `bermd is at its cap of ${cap} open event streams (--max-event-streams); close one, or start bermd with a higher --max-event-streams`,
    { cap },
  );
}

export class EventStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(
    app: FastifyInstance,
    private readonly max = MAX_EVENT_STREAMS,
    private readonly keepAliveMs = SSE_KEEP_ALIVE_MS,
  ) {
    // A stream never ends by itself: closing the app ends them, or it would wait on them forever.
    app.addHook('preClose', async () => {
      for (const res of this.open) res.end();
    });
  }

  /**
   * Opens a stream of `what` (`change`, `figures`: what the log calls it) as the answer to `request`,
   * calling `onClose` once it closes (its client went away, or the app closed); at the cap, answers the
   * refusal instead and gives undefined.
   */
  accept(request: FastifyRequest, reply: FastifyReply, what: string, onClose: () => void): ServerResponse | undefined {
    // Counted and added with no await between, so concurrent requests cannot all pass the check.
    if (this.open.size >= this.max) {
      const refused = capError(this.max);
      // Answered here rather than thrown: the error handler logs every 5xx as bermd's own failure, and this is a client's.
      request.log.warn({ cap: this.max }, 'an event stream refused: at the cap (--max-event-streams)');
      void reply.code(refused.status).send(refused.toBody());
      return undefined;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    const keeping = keepAlive(res, this.keepAliveMs);
    this.open.add(res);
    // The response closes when the client goes away (its connection closed) and when the stream is ended.
    res.once('close', () => {
      clearInterval(keeping);
      this.open.delete(res);
      onClose();
      request.log.debug({ open: this.open.size }, `${what} stream closed`);
    });
    request.log.debug({ open: this.open.size }, `${what} stream opened`);
    return res;
  }
}
