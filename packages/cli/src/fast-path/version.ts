import { existsSync, readFileSync } from 'node:fs';
import { arch, platform, release } from 'node:os';

/**
 * What oclif prints for `--version` (its config's `userAgent`), or undefined where oclif would name the
 * platform `wsl`: it asks the `is-wsl` package, whose signs are looked for here, any one enough to leave
 * the answer to oclif.
 */
export function versionLine(pjson: { name: string; version: string }): string | undefined {
  if (platform() === 'linux' && mayBeWsl()) return undefined;
  return `${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`;
}

function mayBeWsl(): boolean {
  if (release().toLowerCase().includes('microsoft')) return true;
  if (existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL')) return true;
  try {
    return readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft');
  } catch {
    return false;
  }
}
