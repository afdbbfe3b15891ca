import { exitCodeFor } from './exit-codes.js';

/**
 * An error the command line raises itself: a stable `code`, a message that reads after
 * `crab: `, and the details that go with it into the `--json` error object.
 */
export class CliError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** The HTTP status of the daemon answer this error restates (`details.status`), for the exit-code fallback. */
  readonly status?: number;

  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.details = details;
    if (typeof details.status === 'number') this.status = details.status;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

/** How a failure is reported: one line for people, one object for `--json`, one exit status. */
export interface Failure {
  code: string;
  /** One line, without the program name in front. */
  line: string;
  json: { code: string; message: string; [detail: string]: unknown };
  exit: number;
}

interface CodedError extends Error {
  code?: unknown;
  status?: unknown;
  toJSON?: () => unknown;
}

/** oclif's own errors (parse errors, unknown commands) carry an `oclif` member; all are usage errors. */
function isOclifError(err: Error): err is Error & { oclif: { exit?: number }; args?: unknown } {
  return typeof (err as { oclif?: unknown }).oclif === 'object';
}

/** oclif's parse messages span lines and end with a pointer to `--help`; one line is kept. */
function usageLine(err: Error & { args?: unknown }, helpHint: string): string {
  if (err.constructor.name === 'RequiredArgsError' && Array.isArray(err.args)) {
    const names = (err.args as { name?: string }[]).map((a) => (a.name ?? '').toUpperCase()).filter(Boolean);
    return `missing ${names.length === 1 ? 'argument' : 'arguments'} ${names.join(' ')}; ${helpHint}`;
  }
  return usageText(err.message, helpHint);
}

function usageText(message: string, helpHint: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^see more help/i.test(l));
  const text = lines.join(' ');
  return `${text.charAt(0).toLowerCase()}${text.slice(1)}; ${helpHint}`;
}

/**
 * The usage error an oclif error with `message` is reported as, where the fast path reports what oclif
 * would have thrown (a mistyped command) without oclif's error.
 */
export function usageFailure(message: string, helpCommand: string): Failure {
  return usage(usageText(message, `see '${helpCommand} --help'`));
}

function usage(line: string): Failure {
  return { code: 'usage', line, json: { code: 'usage', message: line }, exit: exitCodeFor('usage') };
}

/**
 * Classifies anything a command can throw. `helpCommand` is how to ask for help on what was
 * typed (`crab inspect --help`), named in usage errors.
 */
export function describeFailure(thrown: unknown, helpCommand: string): Failure {
  const err: CodedError = thrown instanceof Error ? thrown : new Error(String(thrown));
  const helpHint = `see '${helpCommand} --help'`;

  if (isOclifError(err)) return usage(usageLine(err, helpHint));

  const code = typeof err.code === 'string' ? err.code : 'internal';
  const status = typeof err.status === 'number' ? err.status : undefined;
  const detail = typeof err.toJSON === 'function' ? err.toJSON() : undefined;
  const json: Failure['json'] = {
    ...(detail !== null && typeof detail === 'object' ? (detail as Record<string, unknown>) : {}),
    code,
    message: err.message,
  };
  if (status !== undefined && json.status === undefined) json.status = status;
  // A CliError restating the 403 (a stored login's, login/refusal.ts) already says what to do.
  const hinted = code === 'insufficient-scope' && !(err instanceof CliError);
  const line = hinted ? withScopeHint(err.message, json.scope, (err as { url?: unknown }).url) : err.message;
  return { code, line, json, exit: exitCodeFor(code, status) };
}

/**
 * bermd's 403 names the principal and the scope it lacks; the line adds which bermd said so and how to
 * get past it, since the token, not the command, is what must change.
 */
function withScopeHint(message: string, scope: unknown, url: unknown): string {
  let where = '';
  if (typeof url === 'string') {
    try {
      where = ` (bermd at ${new URL(url).origin})`;
    } catch {
      // not a URL: the line goes without it
    }
  }
  const needed = typeof scope === 'string' ? scope : 'that scope';
  return `${message}${where}: use a token whose principal holds ${needed} (BERM_TOKEN); bermd's operator gives the scopes`;
}
