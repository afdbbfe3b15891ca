/** JSON pointer helpers (RFC 6901) for local `$ref`s and for the paths breaks carry. */

export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

const NOT_FOUND = Symbol('not found');

/**
 * Resolves a `$ref` against the document it appears in. Only local references (`#`,
 * `#/$defs/X`, `#/definitions/X`, any `#/…` pointer) can be followed; anything else yields
 * `undefined`, and the caller treats the reference as constraining nothing, because what an
 * external document says cannot be known from the manifest alone.
 */
export function resolveLocalRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let fragment = ref.slice(1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    return undefined;
  }
  if (fragment === '') return root;
  if (!fragment.startsWith('/')) return undefined; // a named anchor; manifests do not use them
  let at: unknown = root;
  for (const raw of fragment.slice(1).split('/')) {
    const token = unescapePointerToken(raw);
    at = step(at, token);
    if (at === NOT_FOUND) return undefined;
  }
  return at;
}

function step(at: unknown, token: string): unknown {
  if (Array.isArray(at)) {
    if (!/^(0|[1-9][0-9]*)$/.test(token)) return NOT_FOUND;
    const index = Number(token);
    return index < at.length ? at[index] : NOT_FOUND;
  }
  if (at !== null && typeof at === 'object' && Object.hasOwn(at, token)) {
    return (at as Record<string, unknown>)[token];
  }
  return NOT_FOUND;
}
