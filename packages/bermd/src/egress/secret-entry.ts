/**
 * One secret of the `--secrets` file: the forms it may take, what is wrong with one that takes none of
 * them, whose value a call gets, and whether two readings of it are the same. The file as a whole, its
 * permissions, rotation and the log's redaction are `Secrets`' (secrets.ts).
 */
import { isHarnessName } from '@berm/protocol';

export interface SecretEntry {
  /** The one value every principal allowed gets, or each principal's own, by name. */
  values: string | ReadonlyMap<string, string>;
  /** With one value: undefined for every principal (and calls made for none), else the principals that may use it. */
  principals?: ReadonlySet<string>;
  /** Undefined: every harness; otherwise the harnesses a call must enter through. */
  harnesses?: ReadonlySet<string>;
}

/**
 * Why a secret cannot be substituted for a call: the file does not hold it, the call entered through a
 * harness it is not for, its principal has no value of it, or the call has no principal (bermd's own)
 * and the secret is for named principals only.
 */
export type SecretUnavailable = 'not-provided' | 'out-of-scope' | 'not-for-principal' | 'no-principal';

/** The shapes an entry may take, for the messages that refuse a file. */
export const SECRET_SHAPES =
  '"value", {"value": "...", "principals": [names], "harnesses": [names]} or {"per_principal": {"name": "value"}, "harnesses": [names]}';

/**
 * A principal's name as a secret names it: any printable text, since principals come from `--access`
 * and from an identity provider whose names bermd does not choose; control characters would make a
 * name the log cannot show.
 */
const PRINCIPAL = /^[^\p{Cc}]{1,256}$/u;

const isPrincipal = (name: string): boolean => PRINCIPAL.test(name);

/** A list of names, each checked by `valid`; undefined when it is not one. */
function namesOf(list: unknown, valid: (name: string) => boolean): Set<string> | undefined {
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string' || !valid(x))) return undefined;
  return new Set(list as string[]);
}

/**
 * The entry the file's `item` describes, or what is wrong with it, worded to follow the secret's name
 * (" has ...", ': "member" ...') and never quoting a value.
 */
export function secretEntryOf(item: unknown): SecretEntry | { wrong: string } {
  const wrong = (why: string) => ({ wrong: why });
  if (typeof item === 'string') return item === '' ? wrong(' has an empty value') : { values: item };
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return wrong(` must be one of ${SECRET_SHAPES}`);
  const { value, per_principal: perPrincipal, principals, harnesses, ...rest } = item as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined)
    return wrong(` has unknown member ${JSON.stringify(extra)}; only value, per_principal, principals and harnesses`);
  let scope: Set<string> | undefined;
  if (harnesses !== undefined) {
    scope = namesOf(harnesses, isHarnessName);
    if (scope === undefined) return wrong(': "harnesses" must be a list of harness names');
  }
  const scoped = scope === undefined ? {} : { harnesses: scope };
  if (value !== undefined && perPrincipal !== undefined)
    return wrong(' has both "value" and "per_principal": give one value for every principal allowed, or one value per principal');
  if (perPrincipal !== undefined) {
    if (principals !== undefined) return wrong(': "per_principal" already names the principals it is for: leave "principals" out');
    if (typeof perPrincipal !== 'object' || perPrincipal === null || Array.isArray(perPrincipal) || Object.keys(perPrincipal).length === 0)
      return wrong(': "per_principal" must be a non-empty object of principal name to value');
    const values = new Map<string, string>();
    for (const [principal, given] of Object.entries(perPrincipal)) {
      if (!isPrincipal(principal))
        return wrong(': "per_principal" names a principal that is empty, longer than 256 characters or holds control characters');
      if (typeof given !== 'string' || given === '')
        return wrong(`: "per_principal": the value for ${principal} must be a non-empty string`);
      values.set(principal, given);
    }
    return { values, ...scoped };
  }
  if (value === undefined) return wrong(` needs "value" or "per_principal": ${SECRET_SHAPES}`);
  if (typeof value !== 'string' || value === '') return wrong(' needs a non-empty string value');
  if (principals === undefined) return { values: value, ...scoped };
  const allowed = namesOf(principals, isPrincipal);
  // An empty list would make a secret no call can use, which is never what was meant.
  if (allowed === undefined || allowed.size === 0)
    return wrong(': "principals" must be a non-empty list of principal names (each printable, 1 to 256 characters)');
  return { values: value, principals: allowed, ...scoped };
}

/**
 * The value of `entry` for a call that entered through `harness`, made for `principal` (undefined: a call
 * of bermd's own, for no principal), or why there is none.
 */
export function valueFor(entry: SecretEntry, harness: string, principal: string | undefined): string | { unavailable: SecretUnavailable } {
  if (entry.harnesses !== undefined && !entry.harnesses.has(harness)) return { unavailable: 'out-of-scope' };
  const { values, principals } = entry;
  if (typeof values === 'string' && principals === undefined) return values;
  if (principal === undefined) return { unavailable: 'no-principal' };
  const value = typeof values === 'string' ? (principals!.has(principal) ? values : undefined) : values.get(principal);
  return value ?? { unavailable: 'not-for-principal' };
}

/** Every value an entry holds, whoever it is for. */
export function valuesOf(entry: SecretEntry): Iterable<string> {
  return typeof entry.values === 'string' ? [entry.values] : entry.values.values();
}

function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.size === b.size && [...a].every((x) => b.has(x));
}

function sameValues(a: SecretEntry['values'], b: SecretEntry['values']): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.size === b.size && [...a].every(([principal, value]) => b.get(principal) === value);
}

/** Whether two readings of a secret give the same values to the same callers: a rotation reports it changed otherwise. */
export function sameEntry(a: SecretEntry, b: SecretEntry): boolean {
  return sameValues(a.values, b.values) && sameSet(a.principals, b.principals) && sameSet(a.harnesses, b.harnesses);
}
