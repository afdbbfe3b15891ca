/**
 * The idempotency keys of a chain's nested calls. A call of an `external_write` tool carries a key (its
 * client's, or one bermd made); each `berm.call` its instance makes gets a key derived from it, its
 * ordinal among that instance's calls and the callee, so a retried chain that makes the same calls in the
 * same order sends the same keys upstream, and an upstream that deduplicates writes each once.
 */
import { createHash } from 'node:crypto';

/** The key of the `ordinal`-th (from 0) `berm.call`, to `program.tool`, of an instance whose key is `parent`. */
export function nestedKey(parent: string, ordinal: number, program: string, tool: string): string {
  return createHash('sha256').update(`${parent}\n${ordinal}\n${program}.${tool}`).digest('hex');
}
