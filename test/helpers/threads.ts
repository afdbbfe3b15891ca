// The threads of this process, counted where the system lists them (Linux's /proc/self/task), so a test
// can tell that a worker thread was started, or that one it expected ended really ended; undefined where
// the system does not list them.
import { readdirSync } from 'node:fs';

export function threadCount(): number | undefined {
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return undefined;
  }
}
