/**
 * How a call ends, as the calls counter labels it: a handful of values an operator alerts on, each
 * gathering the runtime's codes (runtime/errors.ts) that call for the same action.
 */
export type CallOutcomeLabel = 'ok' | 'tool_error' | 'refused' | 'timeout' | 'memory' | 'result_too_large' | 'busy' | 'cancelled' | 'error';

const OUTCOMES: Readonly<Record<string, CallOutcomeLabel>> = {
  // The tool itself failed: the harness's author has something to fix.
  'guest-error': 'tool_error',
  trap: 'tool_error',
  'bad-result': 'tool_error',
  'bad-content': 'tool_error',
  'bad-module': 'tool_error',
  // Nothing ran: the caller asked for what it may not have, or what is not there.
  'insufficient-scope': 'refused',
  'invalid-arguments': 'refused',
  'unknown-harness': 'refused',
  'unknown-tool': 'refused',
  // A write's receipt answered for it (docs/contract.md §6): nothing ran.
  'bad-idempotency-key': 'refused',
  'idempotency-key-reused': 'refused',
  'in-progress': 'refused',
  'outcome-unknown': 'refused',
  'result-not-kept': 'refused',
  timeout: 'timeout',
  'memory-limit': 'memory',
  'result-too-large': 'result_too_large',
  busy: 'busy',
  cancelled: 'cancelled',
  // The daemon's side: it closed under the call, or failed.
  closed: 'error',
  internal: 'error',
};

/** The label of a call that ended with `code` (undefined: it answered). */
export function outcomeOf(code: string | undefined): CallOutcomeLabel {
  return code === undefined ? 'ok' : (OUTCOMES[code] ?? 'error');
}
