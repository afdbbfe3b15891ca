/**
 * What `crab run` and `berm call` share about a call's end, so that the same image, tool and arguments
 * read the same from both: the words of a refusal, and the exit status of a tool's error answer.
 */
import type { ToolAnswerDocument } from '@berm/protocol';
import { CliError } from './failure.js';

/** A refusal by the host (`/mcp`'s code and words, or the runtime's), as the command line reports failures. */
export function callRefusal(code: string, message: string, path?: string): CliError {
  return new CliError(code, message, path === undefined ? {} : { path });
}

/** The tool `harness` lacks, with the tools it has: said alike by `crab run` (from the image) and `berm call` (from bermd's list). */
export function unknownTool(harness: string, tool: string, tools: readonly string[]): CliError {
  const has = tools.length === 0 ? 'it has none' : `its tools: ${tools.join(', ')}`;
  return new CliError('unknown-tool', `${harness} has no tool ${JSON.stringify(tool)}; ${has}`, { harness, tool });
}

/** The code a tool's error answer exits with: the command answered, and the answer is no. */
export const TOOL_ERROR_EXIT_CODE = 'guest-error';

export type { ToolAnswerDocument };
