import type { Break } from '@berm/manifest';
import { jsonText } from '../printable.js';

/** The break objects as a JSON array, what `--json` prints too. */
export function formatBreaksJson(breaks: readonly Break[]): string {
  return jsonText(breaks);
}
