import { BermdError } from './errors.js';

/** No dot: MCP dispatch splits `{harness}.{tool}` on the first one. No dot also keeps names clear of the store's temp files. */
export const HARNESS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function isHarnessName(name: string): boolean {
  return HARNESS_NAME.test(name);
}

export function assertHarnessName(name: string): void {
  if (!isHarnessName(name)) {
    throw new BermdError(
      'bad-name',
      `harness name ${JSON.stringify(name)} is not allowed: use 1 to 64 letters, digits, '_' or '-' (no dots)`,
      { name },
    );
  }
}
