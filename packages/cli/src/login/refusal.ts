/**
 * bermd's 401 and 403 restated with what to do about them, which depends on where the token came from:
 * a stored login is renewed with `berm login`, a given token is the operator's to change, and a scope
 * missing is asked for by name. The code and status stay bermd's, and so does the exit status.
 */
import { CliError } from '../failure.js';
import type { Credential } from './credential.js';

interface Refusal {
  code: string;
  message: string;
  status?: number;
  body?: Record<string, unknown>;
  toJSON?: () => unknown;
}

function isRefusal(e: unknown): e is Refusal {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && (code === 'unauthorized' || code === 'insufficient-scope');
}

/**
 * `e` with advice for its credential when it is bermd's 401, or its 403 for a stored login; anything else
 * as it is. A 403 for a given token is the operator's to change and is said where every failure is
 * (failure.ts), as bermd's words name the principal and the scope.
 */
export function explainRefusal(e: unknown, credential: Credential | undefined): unknown {
  if (credential === undefined || !isRefusal(e)) return e;
  if (e.code === 'insufficient-scope' && credential.kind !== 'stored') return e;
  const details: Record<string, unknown> = {
    ...(typeof e.toJSON === 'function' ? (e.toJSON() as Record<string, unknown>) : {}),
    url: credential.key,
  };
  delete details.code;
  delete details.message;
  const message =
    credential.kind === 'stored' && e.code === 'insufficient-scope'
      ? insufficient(e, credential.key, credential.login.scope)
      : unauthorized(e.message, credential);
  return new CliError(e.code, message, details);
}

function unauthorized(said: string, credential: Credential): string {
  const { key } = credential;
  switch (credential.kind) {
    case 'stored':
      return `bermd at ${key} refused the login stored for it (${said}): run berm login --url ${key}`;
    case 'given':
      return `bermd at ${key} refused the token given with --token or BERM_TOKEN (${said}): check it, or leave both unset to use what berm login stores`;
    case 'none':
      return `bermd at ${key} asks for a token (${said}): run berm login --url ${key}, or give one with --token or BERM_TOKEN`;
  }
}

/** A stored login's 403: bermd's words, and how to ask for the scope. */
function insufficient(e: Refusal, key: string, held: string | undefined): string {
  const scope = typeof e.body?.scope === 'string' ? e.body.scope : undefined;
  if (scope === undefined) return `${e.message} (bermd at ${key}): run berm login --url ${key} with the --scope it needs`;
  return `${e.message} (bermd at ${key}): ${askForScope(key, held, scope)}`;
}

/**
 * How the login stored for `key`, holding `held`, gets `scope` (one or more, space-separated): asked for
 * beside those it holds, since a refresh cannot widen a grant and a login asking for the one scope alone
 * would lose the others.
 */
export function askForScope(key: string, held: string | undefined, scope: string): string {
  const holds = (held ?? '').split(' ').filter(Boolean);
  const asked = scope.split(' ').filter(Boolean);
  const missing = asked.filter((s) => !holds.includes(s));
  const ask = [...new Set([...holds, ...asked])].map((s) => `--scope ${s}`).join(' ');
  return `the login stored for it lacks ${missing.length > 0 ? missing.join(' ') : scope}; run berm login --url ${key} ${ask} to ask for it`;
}
