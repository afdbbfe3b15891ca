#!/usr/bin/env node
// Writes oclif.manifest.json: the command list with each command's args and flags, so that
// start-up reads one JSON file instead of importing every command (and all they import) to
// learn their names. The same thing `oclif manifest` does, without that package's install weight.
// Run by the build (root `prepare`/`build`/`test` scripts) after `tsc -b`.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
writeFileSync(new URL('../oclif.manifest.json', import.meta.url), `${JSON.stringify(plugin.manifest, null, 2)}\n`);
