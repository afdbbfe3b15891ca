import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The files below `dir` (none when it does not exist) whose name `accept` takes, outside node_modules, as paths from `root`. */
export function filesUnder(root: string, dir: string, accept: (name: string) => boolean): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && accept(entry.name))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).includes('node_modules'));
}
