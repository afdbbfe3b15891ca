/**
 * bermd's own error classes and what becomes of each: the wire code it is answered with (the protocol's
 * `ERROR_STATUS` gives the status), or, for one that never reaches the wire, where it ends. Every place
 * that turns one into an answer asks here (`wireErrorOf`, `wireCodeOf`), so the wire has one table
 * inside bermd as it has one in `@berm/protocol`.
 *
 * The table is keyed by each class's `name`, not by the class: the classes live in the rooms, which all
 * import this file, and importing them here would make a cycle. test/error-table.test.ts makes one of
 * each real class and checks its name and its code, and that every class of `src` declaring itself an
 * `Error` is in the table.
 */
import type { ErrorCode } from '@berm/protocol';
import { BermdError } from './errors.js';

/** Where an error that never reaches the wire ends instead. */
export type OffWire =
  /** A value bermd cannot use, read before it serves: said as a bad option, exit 2 (options.ts). */
  | 'bad-option'
  /** Refuses the start: said on stderr, exit 1 (main.ts, migrate-store.ts). */
  | 'start-refused'
  /** Inside the runtime: a call answers with its `CallError` (a tool's error result), never an HTTP error. */
  | 'call-answer';

export type ErrorRoute =
  /** Answered with this code. */
  | { readonly wire: ErrorCode }
  /** Answered with the code its own `code` names. */
  | { readonly wireByCode: Readonly<Record<string, ErrorCode>> }
  | { readonly offWire: OffWire; readonly why: string };

export const ERROR_TABLE = {
  OptionsError: { offWire: 'bad-option', why: 'a flag bermd cannot use' },
  ResolveError: { offWire: 'bad-option', why: 'a --resolve entry that does not read' },
  SecretsFileError: {
    offWire: 'bad-option',
    why: 'the --secrets file does not read; on SIGHUP it is logged and the secrets held are kept (main.ts)',
  },
  AccessFileError: {
    offWire: 'bad-option',
    why: 'the --access file does not read; on SIGHUP it is logged and the principals held are kept (main.ts)',
  },
  TraceConfigError: { offWire: 'bad-option', why: 'an OTEL_* variable or --otel-* flag bermd cannot use (options.ts says it as the flag)' },
  SchemaError: { offWire: 'start-refused', why: 'the database holds a schema this bermd cannot use' },
  AbiViolation: { offWire: 'call-answer', why: 'the guest broke the ABI: its call answers bad-result' },
  TaskStopped: { offWire: 'call-answer', why: "a worker's task stopped: its call answers timeout, cancelled or closed" },
  CallRefused: {
    offWire: 'call-answer',
    why: "the runtime without a daemon (bermd/runtime): crab run's caller gets the call's code, as /mcp would answer it",
  },
  SessionCapError: { wire: 'session-cap' },
  SignatureReadError: { wire: 'unsupported-module' },
  RunnerError: {
    // Thrown at deploy for an image the runtime cannot take; `bad-option` and `closed` are bermd's own failures.
    wireByCode: {
      'memory-too-large': 'memory-too-large',
      'bad-schema': 'bad-schema',
      'bad-module': 'unsupported-module',
      'bad-harness': 'missing-export',
      'bad-option': 'internal',
      closed: 'internal',
    },
  },
  // The crash tests' seam (faults.ts): a failure of bermd's own, as a test wants it seen.
  InjectedFault: { wire: 'internal' },
} as const satisfies Record<string, ErrorRoute>;

export type InternalErrorName = keyof typeof ERROR_TABLE;

/** The table's row for `e`, when `e` is one of bermd's own classes. */
export function routeOf(e: unknown): ErrorRoute | undefined {
  if (!(e instanceof Error) || !Object.hasOwn(ERROR_TABLE, e.name)) return undefined;
  return ERROR_TABLE[e.name as InternalErrorName];
}

/**
 * The code `e` is answered with: its own for a wire error, the table's for one of bermd's classes, and
 * `internal` for anything else, one that should never have reached the wire included.
 */
export function wireCodeOf(e: unknown): ErrorCode {
  if (e instanceof BermdError) return e.code;
  const route = routeOf(e);
  if (route === undefined || 'offWire' in route) return 'internal';
  if ('wire' in route) return route.wire;
  const own = (e as { code?: unknown }).code;
  return typeof own === 'string' && Object.hasOwn(route.wireByCode, own) ? route.wireByCode[own]! : 'internal';
}

/** What an `internal` answer says: the failure itself (which may name paths or the database) is for the log. */
export const INTERNAL_MESSAGE = 'bermd failed to answer this request; its log says why';

/**
 * `e` as the error bermd answers with, its code from `wireCodeOf`: the message and details the caller
 * words (`e`'s message and none by default), or for `internal` a message that says nothing of `e`, which
 * travels as the cause, for the log.
 */
export function wireErrorOf(e: unknown, message?: string, details: Record<string, unknown> = {}): BermdError {
  if (e instanceof BermdError && message === undefined) return e;
  const code = wireCodeOf(e);
  if (code === 'internal') return new BermdError('internal', INTERNAL_MESSAGE, {}, { cause: e });
  return new BermdError(code, message ?? (e instanceof Error ? e.message : String(e)), details);
}

/** Whether `e` ends as a bad option (exit 2) rather than on the wire: options.ts words it as one. */
export function isBadOption(e: unknown): e is Error {
  const route = routeOf(e);
  return route !== undefined && 'offWire' in route && route.offWire === 'bad-option';
}
