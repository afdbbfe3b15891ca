/**
 * The errors bermd answers with. Their codes, statuses and body are the wire contract's
 * (`@berm/protocol`); the core raises them and the control plugin only serialises them, so the core
 * stays testable without a socket.
 */
import { ApiError, badHarnessNameMessage, ERROR_STATUS, isHarnessName, type ErrorCode } from '@berm/protocol';

export { ERROR_STATUS };
export type BermdErrorCode = ErrorCode;

export class BermdError extends ApiError {
  /**
   * `options.cause` is the error this one answers for (`Error`'s own `cause`): never sent, as `toBody`
   * sends the code, the message and the details, and logged with its stack (pino's `err` serializer
   * follows causes), so a 500's log line says what failed.
   */
  constructor(code: BermdErrorCode, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(code, message, details);
    this.name = 'BermdError';
    if (options !== undefined && 'cause' in options) this.cause = options.cause;
  }

  /** The same error as bermd raises it, for one the protocol's readers threw. */
  static from(e: ApiError): BermdError {
    return e instanceof BermdError ? e : new BermdError(e.code, e.message, e.details);
  }
}

export function isBermdError(e: unknown): e is BermdError {
  return e instanceof BermdError;
}

/** A name outside the rule (spec §5) is refused before anything else is looked at. */
export function assertHarnessName(name: string): void {
  if (!isHarnessName(name)) throw new BermdError('bad-name', badHarnessNameMessage(name), { name });
}
