import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@berm/protocol';
import { BermdError } from '../errors.js';

/** A framework error (bad body, bad framing) as the control API answers it. */
export function apiErrorOf(error: FastifyError): BermdError {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new BermdError('unsupported-media-type', error.message);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new BermdError('bad-request', error.message);
  return new BermdError('internal', 'bermd failed to answer this request; its log says why');
}

/** Answers `error` as `{"error": {...}}` with its status; a failure of bermd itself is logged. */
export function replyWithError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answered = error instanceof ApiError ? error : apiErrorOf(error);
  if (answered.status >= 500) request.log.error({ err: error }, error instanceof ApiError ? error.message : 'request failed');
  return reply.code(answered.status).send(answered.toBody());
}
