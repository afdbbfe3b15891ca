// The words of a call stopped at its time limit. How long it waited for a worker before it started
// depends on what else the machine was doing, so the clause that says so is matched, not fixed.

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Matches `<label> did not finish within <limitMs> ms[, N ms of it waiting for a worker,] and was stopped<tail>`,
 * the message of a call the runner stopped at its limit.
 */
export function stoppedAt(label: string, limitMs: number, tail = ''): RegExp {
  return new RegExp(
    `^${escaped(`${label} did not finish within ${limitMs} ms`)}(, \\d+ ms of it waiting for a worker,)? ${escaped(`and was stopped${tail}`)}$`,
  );
}
