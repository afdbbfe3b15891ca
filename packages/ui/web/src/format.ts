/** The CLI's text forms (`crab ls`, `crab inspect`), so the page and the terminal say the same thing. */
import { renderArguments, renderSchema } from '@berm/format';
import type { EventSpec, ToolSpec } from './types.js';

export { ago, deployedByText, grantsText, limitsText, shortDigest } from '@berm/format';

/** A tool's arguments and result in the CLI's compact form: `city: string, days?: integer ≥0` and `Forecast{…}`. */
export function toolSignature(tool: ToolSpec): { args: string; returns: string | undefined } {
  return { args: renderArguments(tool.arguments), returns: tool.returns === undefined ? undefined : renderSchema(tool.returns) };
}

export function eventSignature(event: EventSpec): string {
  return renderArguments(event.fields);
}
