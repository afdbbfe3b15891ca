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

/** `e` with advice for its credential when it is bermd's 401 or 403; anything else as it is. */
export function explainRefusal(e: unknown, credential: Credential | undefined): unknown {
  if (credential === undefined || !isRefusal(e)) return e;
  const details: Record<string, unknown> = {
    ...(typeof e.toJSON === 'function' ? (e.toJSON() as Record<string, unknown>) : {}),
    url: credential.key,
  };
  delete details.code;
  delete details.message;
  const message = e.code === 'unauthorized' ? unauthorized(e.message, credential) : insufficient(e, credential);
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

function insufficient(e: Refusal, credential: Credential): string {
  const { key } = credential;
  const scope = typeof e.body?.scope === 'string' ? e.body.scope : undefined;
  const lacking = scope === undefined ? `a scope this request needs (${e.message})` : `the scope ${scope} this request needs`;
  if (credential.kind === 'stored') {
    const held = (credential.login.scope ?? '').split(' ').filter(Boolean);
    const wanted = [...new Set([...held, ...(scope === undefined ? [] : [scope])])];
    const ask = wanted.map((s) => `--scope ${s}`).join(' ');
    return `the login stored for bermd at ${key} lacks ${lacking}: run berm login --url ${key} ${ask}`.trimEnd();
  }
  if (credential.kind === 'none')
    return `bermd at ${key} refused a request without a token for lacking ${lacking}: run berm login --url ${key}`;
  return `the token given to bermd at ${key} lacks ${lacking}: ask its operator for a token that holds it${
    scope === undefined ? '' : ` (bermd token new NAME --scope ${scope} ...)`
  }, or log in with berm login --url ${key}${scope === undefined ? '' : ` --scope ${scope}`}`;
}
