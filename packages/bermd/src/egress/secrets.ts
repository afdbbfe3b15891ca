/**
 * Secrets the operator holds for harnesses (`--secrets FILE`). An image only names a secret, in
 * `deps.secrets` and as `{secret:NAME}` in a request header; the value lives here, is substituted by the
 * host when a request is sent, and is never handed to a guest, written to the log or put in an answer.
 *
 * The file is JSON, an object of secrets by name. `{"NAME": "value"}` makes NAME available to every
 * harness that declares it (and is granted it), for every call. An object limits it:
 * - `{"value": "...", "harnesses": ["a", "b"]}`: only to calls that enter through harness a or b;
 * - `{"value": "...", "principals": ["ci", "alice"]}`: only to calls made for principal ci or alice;
 * - `{"per_principal": {"alice": "...", "bob": "..."}}`: each principal its own value, so `{secret:NAME}`
 *   becomes the caller's own credential, and a principal without one gets none;
 * `harnesses` goes with either of the last two. A call of bermd's own (for no principal) gets no secret
 * limited to principals. The file is refused when group or others may read or write it, as ssh refuses a
 * private key.
 */
import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { SECRET_SHAPES, type SecretEntry, secretEntryOf, type SecretUnavailable, sameEntry, valueFor, valuesOf } from './secret-entry.js';

export type { SecretUnavailable };

/** Secret names as `{secret:NAME}` writes them: no braces, no spaces. */
export const SECRET_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export class SecretsFileError extends Error {
  readonly code = 'bad-secrets-file';
  constructor(message: string) {
    super(message);
    this.name = 'SecretsFileError';
  }
}

/** What a `replace` changed, by name (never by value): each list sorted. */
export interface SecretsChange {
  added: string[];
  removed: string[];
  /** Names whose values, or who may use them (principals, harnesses), are not what they were. */
  changed: string[];
}

interface Mask {
  value: string;
  mask: string;
}

/** `value` with the text `mask` it is replaced by in the log, as written and as JSON writes it escaped. */
function masksOf(value: string, mask: string): Mask[] {
  // In a JSON log line a value with quotes, backslashes or control characters is written escaped.
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value
    ? [{ value, mask }]
    : [
        { value, mask },
        { value: escaped, mask },
      ];
}

export class Secrets {
  private entries: ReadonlyMap<string, SecretEntry>;
  /** Values with the text each is replaced by, longest first, so a value inside another is not replaced first. */
  private masks: Mask[] = [];
  /**
   * Values this daemon held and no longer does (rotated or removed), still kept out of the log: a request
   * sent before the rotation may yet come back with one in an error.
   */
  private readonly retired: Mask[] = [];
  /** Values of the operator's that are not for harnesses (the store's password): hidden, never substituted. */
  private readonly hidden: Mask[] = [];

  private constructor(entries: Map<string, SecretEntry>) {
    this.entries = entries;
    this.remask();
  }

  private remask(): void {
    const masks = [...this.retired, ...this.hidden];
    // Every principal's value is masked by the secret's name alone: the log says which secret, not whose.
    for (const [name, entry] of this.entries) for (const value of valuesOf(entry)) masks.push(...masksOf(value, `[secret:${name}]`));
    this.masks = masks.sort((a, b) => b.value.length - a.value.length);
  }

  /**
   * Takes `next`'s secrets in place of these, for every holder of this object (the HTTP syscalls, the log's
   * filter, the deploy's notices): how `SIGHUP` rotates secrets without a restart. What `hide` hides stays hidden.
   */
  replace(next: Secrets): SecretsChange {
    const change: SecretsChange = { added: [], removed: [], changed: [] };
    for (const [name, entry] of this.entries) {
      const now = next.entries.get(name);
      if (now === undefined) change.removed.push(name);
      else if (!sameEntry(entry, now)) change.changed.push(name);
      const kept = new Set(now === undefined ? [] : valuesOf(now));
      for (const value of valuesOf(entry)) if (!kept.has(value)) this.retired.push(...masksOf(value, `[secret:${name}]`));
    }
    for (const name of next.entries.keys()) if (!this.entries.has(name)) change.added.push(name);
    this.entries = next.entries;
    this.remask();
    for (const list of Object.values(change)) list.sort();
    return change;
  }

  /**
   * Hides `value` besides these secrets: `redact` replaces it by `[label]`, and no call can name it. For a
   * secret of the operator's that is not for harnesses (the store's password). Returns this object.
   */
  hide(label: string, value: string): this {
    this.hidden.push(...masksOf(value, `[${label}]`));
    this.remask();
    return this;
  }

  static none(): Secrets {
    return new Secrets(new Map());
  }

  /** Parses the file's text (no permission check; see `load`). */
  static parse(text: string, where = 'the secrets file'): Secrets {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // JSON.parse's own message quotes the text around the fault, which may be a value.
      throw new SecretsFileError(`${where} is not JSON: expected an object of secrets by name, each ${SECRET_SHAPES}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new SecretsFileError(`${where} must hold a JSON object of secrets by name`);
    }
    const entries = new Map<string, SecretEntry>();
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      if (!SECRET_NAME.test(name))
        throw new SecretsFileError(`${where}: secret name ${JSON.stringify(name)} is not 1 to 128 letters, digits, '_', '.' or '-'`);
      const entry = secretEntryOf(item);
      if ('wrong' in entry) throw new SecretsFileError(`${where}: secret ${name}${entry.wrong}`);
      entries.set(name, entry);
    }
    return new Secrets(entries);
  }

  /** Reads `file`, refusing it when it is not a regular file or when group or others have any access to it. */
  static async load(file: string): Promise<Secrets> {
    const where = `--secrets ${file}`;
    let info: Stats;
    try {
      info = await stat(file);
    } catch (e) {
      throw new SecretsFileError(`${where}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    if (!info.isFile()) throw new SecretsFileError(`${where} is not a regular file`);
    if ((info.mode & 0o077) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
      throw new SecretsFileError(`${where} is accessible to group or others (mode ${mode}); it holds secret values: chmod 600 ${file}`);
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new SecretsFileError(`${where}: ${(e as Error).message}`);
    }
    return Secrets.parse(text, where);
  }

  get size(): number {
    return this.entries.size;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /**
   * Whether the file holds `name` for calls that enter through `harness`: what a deploy's notice asks. Who
   * the call is for is not known then, so a secret for named principals only counts as held.
   */
  availableTo(name: string, harness: string): boolean {
    const entry = this.entries.get(name);
    return entry !== undefined && (entry.harnesses === undefined || entry.harnesses.has(harness));
  }

  /**
   * The value of `name` for a call that entered through `harness`, made for `principal` (undefined: a call
   * of bermd's own, for no principal), or why there is none.
   */
  lookup(name: string, harness: string, principal?: string): string | { unavailable: SecretUnavailable } {
    const entry = this.entries.get(name);
    return entry === undefined ? { unavailable: 'not-provided' } : valueFor(entry, harness, principal);
  }

  /** `text` with every secret value (and its JSON-escaped form) replaced by `[secret:NAME]`. */
  redact(text: string): string {
    let out = text;
    for (const { value, mask } of this.masks) {
      if (out.includes(value)) out = out.split(value).join(mask);
    }
    return out;
  }

  /** Whether `text` holds any secret value. */
  leaks(text: string): boolean {
    return this.masks.some(({ value }) => text.includes(value));
  }
}
