import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Reads and drops the rest of a body that is over its route's limit, so a client still sending gets
 * the 413 that is being answered rather than a broken pipe (fastify would close the connection). Past
 * `bound` bytes the connection is closed instead.
 */
export function drainRejectedBody(request: FastifyRequest, reply: FastifyReply, bound: number): void {
  if (request.raw.complete) return;
  reply.removeHeader('connection');
  let drained = 0;
  request.raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bound) request.raw.destroy();
  });
  request.raw.resume();
}
