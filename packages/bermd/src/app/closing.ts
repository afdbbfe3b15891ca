/**
 * How bermd's HTTP server lets go of its connections when the daemon stops. Closing the app waits for
 * every open connection (Node's `server.close()`), and Node closes by itself only those idle between two
 * requests. Two other kinds would keep a stopping daemon waiting until their client let go, which a
 * client's connection pool may never do:
 *
 * - a connection that has not carried a request yet, which Node never times out. undici's client makes
 *   one whenever its caller cancels a response still streaming (a page or a test leaving `GET /events`):
 *   it destroys that connection, then connects again for the request it aborted and sends nothing on
 *   the new one.
 * - a keep-alive connection whose answer ends once the close has begun: a stream the close itself ends
 *   (`GET /events`), or any answer whose headers went out before the close.
 *
 * So once closing, answers say `connection: close`, and as soon as no answer is under way on any
 * connection, every connection is closed: answers under way finish first (a deploy still being received
 * when bermd is told to stop is stored and answered), and nothing is left for the close to wait on.
 */
import type { FastifyInstance } from 'fastify';

/** Sets it up on `app`; answers whether the close has begun (a request then is refused: app.ts). */
export function closeConnectionsOnClose(app: FastifyInstance): () => boolean {
  const server = app.server;
  let closing = false;
  let underWay = 0;
  const closeIfQuiet = (): void => {
    if (closing && underWay === 0) server.closeAllConnections();
  };

  server.on('request', (_request, response) => {
    underWay++;
    // A response closes once it is sent, or when its connection is lost first.
    response.once('close', () => {
      underWay--;
      closeIfQuiet();
    });
  });
  // Until fastify stops the server listening, a connection may still be made; closed at once when nothing is under way.
  server.on('connection', (socket) => {
    if (closing && underWay === 0) socket.destroy();
  });

  app.addHook('preClose', async () => {
    closing = true;
    closeIfQuiet();
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  return () => closing;
}
