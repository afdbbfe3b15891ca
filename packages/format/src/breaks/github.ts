import type { Break } from '@berm/manifest';
import { printable } from '../printable.js';
import { subjectOf } from './subject.js';

/**
 * GitHub Actions workflow commands: one `::error` annotation per break. Escaping follows the
 * runner's rules (as @actions/core applies them): `%`, CR and LF in the message; those and
 * `:` and `,` in property values, which would otherwise end the value. The other control
 * characters are made printable: the runner's log view renders escape sequences, and so does a
 * terminal.
 */
export function formatBreaksGithub(breaks: readonly Break[]): string {
  if (breaks.length === 0) return 'No breaking changes.';
  return breaks
    .map((item) => {
      const title = `${item.code} in ${subjectOf(item)}`;
      const where = item.path ? ` (at ${item.path})` : '';
      // CR and LF are the runner's to decode (as %0D, %0A); the other control characters are shown.
      return `::error title=${printable(escapeProperty(title))}::${printable(escapeData(item.message + where))}`;
    })
    .join('\n');
}

export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
