import { CliError } from './failure.js';

/**
 * A filesystem's failure to read `file`, as a `CliError` naming it; anything else passes through. Apart
 * from input.ts, whose manifest reader a command reading only bytes (`crab run`) need not load.
 */
export function fileError(file: string, e: unknown): unknown {
  const errno = e as NodeJS.ErrnoException;
  if (e instanceof Error && typeof errno.code === 'string' && typeof errno.syscall === 'string') {
    const details = { file, errno: errno.code };
    switch (errno.code) {
      case 'ENOENT':
        return new CliError('file-not-found', `cannot read '${file}': no such file`, details);
      case 'EISDIR':
        return new CliError('is-a-directory', `cannot read '${file}': it is a directory`, details);
      case 'EACCES':
      case 'EPERM':
        return new CliError('file-unreadable', `cannot read '${file}': permission denied`, details);
      default:
        return new CliError('file-unreadable', `cannot read '${file}': ${errno.message}`, details);
    }
  }
  return e;
}
