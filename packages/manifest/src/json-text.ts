// Manifests carry text their authors chose, and that text reaches terminals through JSON: a message
// quoting a value, the CLI's --json output, bermd's log.

const RAW_CONTROLS = /[\u007f-\u009f]/g;

/**
 * `json` (text JSON.stringify wrote) with DEL and C1 escaped as well: JSON.stringify escapes C0 (ESC is
 * `\u001b`) but writes DEL and C1 as they are, and a terminal in UTF-8 reads U+009B as CSI. In JSON text
 * those characters can only stand inside strings, so the text parses to the same value.
 */
export function escapeRawControls(json: string): string {
  return json.replace(RAW_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
