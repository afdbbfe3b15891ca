/**
 * What bermd writes on stderr outside its log (why a start was refused, why `migrate-store` stopped)
 * quotes text from elsewhere: a database's error repeats the database and user names it was given, which
 * can hold an escape sequence. Its control characters are written as the log's JSON lines write them
 * (`\u001b`), so that only bermd's own text reaches the operator's terminal, on one line.
 */
import { escapeRawControls } from '@berm/manifest';

/** C0 but tab: line breaks included, so a quoted text cannot start a line of its own. */
const C0 = /[\u0000-\u0008\u000a-\u001f]/g;

/** `text` with C0 (but tab), DEL and C1 escaped. Redact secrets before, so that a value is found as it was. */
export function printable(text: string): string {
  return escapeRawControls(text.replace(C0, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
