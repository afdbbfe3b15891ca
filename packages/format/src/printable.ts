/**
 * The one escaping path for text the command line did not write itself: what an image declares
 * (names, descriptions, schema keys and values), what a daemon answers (versions, notices, messages,
 * times), what an input file holds. An image is untrusted input, and so is whatever answers at
 * BERM_URL: an escape sequence in any of it could clear the screen, retitle the window or forge
 * output. In every human view and error line, control characters (C0 but tab and line feed, DEL,
 * C1) are shown as their Unicode control pictures (ESC as ␛, CR as ␍), or � for C1, which has
 * none: visible, one character each, and left alone by the JSON the schema views quote values in.
 * Styles are applied after this, so crab's own escapes are the only ones written. JSON output goes
 * through `jsonText`, which keeps the data as it is.
 */
// The one function, not the package's door, which loads the whole reader and its validator.
import { escapeRawControls } from '@berm/manifest/json-text';

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function picture(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  return code === 0x7f ? '\u2421' : '\ufffd';
}

export function printable(text: string): string {
  return text.replace(CONTROL, picture);
}

/** `value` as indented JSON text with no control character in it; it parses to the same value. */
export function jsonText(value: unknown): string {
  return escapeRawControls(JSON.stringify(value, null, 2));
}

/** `value` with every string in it, object keys included, made printable. */
export function printableDeep<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map(printableDeep) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
  }
  return value;
}
