/**
 * The project's sources as `crab build` reads them: `assembly/**` (the entry and what it imports),
 * `package.json` (the name, version and declared deps) and `README.md` (the manifest's usage, when
 * package.json gives none). Watched with chokidar rather than `fs.watch({recursive})`, which on Node 20's
 * Linux stops reporting a file once an editor has saved it by renaming a new file over it (see decisions.md).
 */
import { relative, resolve, sep } from 'node:path';

/** Whether `path` (relative to the project, `/`-separated, `''` for the project itself) is a source. */
export function isSource(path: string): boolean {
  return path === '' || path === 'package.json' || path === 'README.md' || path === 'assembly' || path.startsWith('assembly/');
}

export interface SourceWatch {
  close(): Promise<void>;
}

/**
 * Watches `dir`'s sources; `onChange` gets each changed path relative to `dir`. Resolves once the
 * watch is set up, so that no save made after it resolves is missed.
 */
export async function watchSources(dir: string, onChange: (path: string) => void, onError: (err: unknown) => void): Promise<SourceWatch> {
  const { watch } = await import('chokidar');
  const root = resolve(dir);
  const inProject = (path: string): string => relative(root, resolve(root, path)).split(sep).join('/');
  const watcher = watch(root, {
    ignoreInitial: true,
    // Not descended into: build/ (what a build writes would start the next), node_modules/, .git/.
    ignored: (path: string) => !isSource(inProject(path)),
  });
  watcher.on('all', (event, path) => {
    if (event !== 'addDir') onChange(inProject(path));
  });
  watcher.on('error', onError);
  await new Promise<void>((ready) => watcher.once('ready', ready));
  return { close: () => watcher.close() };
}
