/**
 * Which compiler, json-as and guest library a build uses. A project that installed assemblyscript
 * builds with its own copies of all three (and gets editor types from them); one that installed
 * nothing builds with the copies @berm/guest depends on. Never a mix: json-as's transform builds
 * syntax trees with the compiler it imports, and the guest library's glue names json-as's API, so the
 * three must be one set.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GuestError } from './errors.js';

export interface ToolchainPackage {
  version: string;
  /** The package's directory. */
  dir: string;
}

export interface Toolchain {
  /** `project`: the project's node_modules; `bundled`: what @berm/guest depends on. */
  source: 'project' | 'bundled';
  assemblyscript: ToolchainPackage;
  jsonAs: ToolchainPackage;
  guest: ToolchainPackage;
}

/** This package's own directory. */
export const GUEST_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

function packageAt(require: NodeJS.Require, name: string): ToolchainPackage {
  const file = require.resolve(`${name}/package.json`);
  return { version: (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version, dir: dirname(file) };
}

/**
 * Package `name` as the compiler finds it from `projectDir`: in the node_modules of that directory
 * or of one above it. Not Node's resolution: that also reads NODE_PATH (which package managers set
 * for the scripts they run), where the compiler never looks.
 */
function installed(projectDir: string, name: string): ToolchainPackage | undefined {
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return { version: (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version, dir: dirname(file) };
    if (dirname(dir) === dir) return undefined;
  }
}

export function resolveToolchain(projectDir: string): Toolchain {
  const assemblyscript = installed(projectDir, 'assemblyscript');
  if (assemblyscript !== undefined) {
    const jsonAs = installed(projectDir, 'json-as');
    const guest = installed(projectDir, '@berm/guest');
    if (jsonAs === undefined || guest === undefined) {
      const missing = [jsonAs === undefined ? 'json-as' : '', guest === undefined ? '@berm/guest' : ''].filter(Boolean);
      throw new GuestError(
        'toolchain-incomplete',
        `the project installs assemblyscript but not ${missing.join(' or ')}; install ${missing.length === 1 ? 'it' : 'them'} too (npm install --save-dev ${missing.join(' ')}), or remove assemblyscript to build with the copies crab brings`,
        { missing },
      );
    }
    return { source: 'project', assemblyscript, jsonAs, guest };
  }
  return bundledToolchain();
}

/** The compiler, json-as and guest library @berm/guest brings. */
export function bundledToolchain(): Toolchain {
  const own = createRequire(join(GUEST_DIR, 'package.json'));
  return {
    source: 'bundled',
    assemblyscript: packageAt(own, 'assemblyscript'),
    jsonAs: packageAt(own, 'json-as'),
    guest: { version: (JSON.parse(readFileSync(join(GUEST_DIR, 'package.json'), 'utf8')) as { version: string }).version, dir: GUEST_DIR },
  };
}
