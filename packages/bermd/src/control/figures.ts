/**
 * The live figures of the deployed harnesses' calls: `GET /figures` (each harness's calls per minute
 * over the hour, for the list's sparklines), `GET /harnesses/{name}/figures` (per tool: since start, the
 * last minute, the hour), and `GET /figures/events`, a stream telling which harnesses' figures moved, at
 * most once an interval and only when some did, so a page reads again what it shows of them. A stream of
 * its own rather than an event of `/events`: a client following deploys is not woken every few seconds
 * by calls it did not ask about. The figures themselves are kept elsewhere (`FiguresSource`).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { SCOPE, type FiguresChange, type FiguresSummary, type HarnessFigures } from '@berm/protocol';
import { needs } from '../app/index.js';
import { BermdError } from '../errors.js';
import type { EventStreams } from './event-stream.js';
import { HARNESS_SCHEMA } from './schemas.js';

export const FIGURES_EVENTS_PATH = '/figures/events';

/** How often the stream may say what moved: often enough for a page to look live, rarely enough to cost nothing. */
export const FIGURES_INTERVAL_MS = 2_000;

/** Where the figures come from (telemetry/'s `LiveFigures`, wired in daemon.ts). */
export interface FiguresSource {
  harness(name: string): HarnessFigures | undefined;
  summary(): FiguresSummary;
  /** The harnesses whose figures moved since it was last asked. */
  takeChanged(): string[];
}

/** Adds the figures' routes to the control plugin, its stream among `streams`, told every `intervalMs`. */
export function addFigureRoutes(
  app: FastifyInstance,
  figures: FiguresSource,
  streams: EventStreams,
  intervalMs = FIGURES_INTERVAL_MS,
): void {
  const read = { access: needs(SCOPE.read) };

  app.get('/figures', { config: read }, async (): Promise<FiguresSummary> => figures.summary());

  app.get<{ Params: { name: string } }>(
    '/harnesses/:name/figures',
    { schema: HARNESS_SCHEMA, config: read },
    async (request): Promise<HarnessFigures> => {
      const found = figures.harness(request.params.name);
      if (found === undefined)
        throw new BermdError('not-found', `no harness named ${request.params.name} is deployed, so it has no figures`, {
          name: request.params.name,
        });
      return found;
    },
  );

  // One timer for every open stream, running only while one is open.
  const open = new Set<ServerResponse>();
  let ticking: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const harnesses = figures.takeChanged();
    if (harnesses.length === 0) return;
    const change: FiguresChange = { harnesses };
    const frame = `event: figures\ndata: ${JSON.stringify(change)}\n\n`;
    for (const res of open) res.write(frame);
  };

  app.get(FIGURES_EVENTS_PATH, { config: read }, async (request, reply) => {
    const res = streams.accept(request, reply, 'figures', () => {
      open.delete(res!);
      if (open.size === 0) {
        clearInterval(ticking);
        ticking = undefined;
      }
    });
    if (res === undefined) return reply;
    open.add(res);
    if (ticking === undefined) {
      // What moved while no one followed is in what the new reader fetches: only what moves from now on is told.
      figures.takeChanged();
      ticking = setInterval(tick, intervalMs);
      ticking.unref();
    }
    res.write(': subscribed\n\n');
  });
}
