import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@berm/protocol';
import { wireErrorOf } from '../error-table.js';
import { BermdError } from '../errors.js';

/**
 * A framework error (bad body, bad framing) as the control API answers it; anything else (a failure of
 * bermd's own) is `internal`, carrying `error` as its cause for the log.
 */
export function apiErrorOf(error: FastifyError): BermdError {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new BermdError('unsupported-media-type', error.message);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new BermdError('bad-request', error.message);
  return wireErrorOf(error);
}

/**
 * Answers `error` as `{"error": {...}}` with its status. An answer of 500 or more is logged with the
 * error answered, whose cause (the original failure) pino's serializer prints, message and stack.
 */
export function replyWithError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answered = error instanceof ApiError ? error : apiErrorOf(error);
  if (answered.status >= 500) request.log.error({ err: answered }, answered.cause === undefined ? answered.message : 'request failed');
  return reply.code(answered.status).send(answered.toBody());
}
