// oclif's Config as bin/run.js loads it, for the build scripts that render or record what oclif holds
// (oclif-manifest.js, help-texts.js): the root plugin, and the plugins package.json lists when asked.
import { fileURLToPath } from 'node:url';
import { Config, Plugin } from '@oclif/core';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The Config for `pjson` (package.json, or one with another bin), with its listed plugins when `withPlugins`; and its root plugin. */
export async function loadConfig(pjson, withPlugins) {
  const rootPlugin = new Plugin({ root, pjson, isRoot: true });
  await rootPlugin.load();
  const plugins = new Map([[rootPlugin.name, rootPlugin]]);
  if (withPlugins) {
    for (const name of pjson.oclif.plugins ?? []) {
      const child = new Plugin({ root, name, type: 'core', parent: rootPlugin });
      await child.load();
      plugins.set(child.name, child);
    }
  }
  return { config: await Config.load({ root, pjson, plugins }), rootPlugin };
}
