/**
 * The harness name rule (spec §5). No dot: MCP dispatch reads `{harness}.{tool}`, and a name without
 * one also stays clear of the store's temp files. The client checks it too, so a name like `..` never
 * becomes another path.
 */
export const HARNESS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function isHarnessName(name: string): boolean {
  return HARNESS_NAME.test(name);
}

/** What the daemon and the client say of a name outside the rule. */
export function badHarnessNameMessage(name: string): string {
  return `harness name ${JSON.stringify(name)} is not allowed: use 1 to 64 letters, digits, '_' or '-' (no dots)`;
}
