import { stat } from 'node:fs/promises';
import { Manifest, type Break } from '@berm/manifest';
import { isHarnessName } from '@berm/protocol';
import { formatBreaksGithub } from '@berm/format/breaks/github';
import { formatBreaksJson } from '@berm/format/breaks/json';
import { formatBreaksMarkdown } from '@berm/format/breaks/markdown';
import { formatBreaksText } from '@berm/format/breaks/text';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { inputError, readImageOrManifest } from '../input.js';
import { readImageOrReference } from '../registry/read.js';
import { type RegistryFlagValues, type RegistrySettings, registrySettings } from '../registry/settings.js';

export const BREAK_FORMATS = ['text', 'json', 'github', 'markdown'] as const;

export interface BreaksFlags extends RegistryFlagValues {
  format: (typeof BREAK_FORMATS)[number];
  url?: string;
  token?: string;
}

export async function breaks({ args, flags }: Parsed<{ old: string; new: string }, BreaksFlags>, ctx: CommandContext): Promise<Break[]> {
  // One after the other, so that when both are bad the one reported is always OLD.
  const settings = registrySettings(flags);
  const old = await readOld(args.old, flags, settings, ctx);
  const next = await readImageOrReference(args.new, () => readImageOrManifest(args.new), settings);
  const found = old.breaks(next);
  if (found.length > 0) ctx.answerNegatively('breaks-found');
  if (!ctx.json) ctx.log(await format(found, flags.format));
  return found;
}

/**
 * OLD as a file when the path exists or no daemon address is given; otherwise, when it is a
 * harness name, the manifest of the image deployed under that name.
 */
async function readOld(
  old: string,
  flags: { url?: string; token?: string },
  settings: RegistrySettings,
  ctx: CommandContext,
): Promise<Manifest> {
  const { url } = flags;
  // A reference has a slash, which no harness name has: the two never meet.
  if (old.includes('/')) return readImageOrReference(old, () => readImageOrManifest(old), settings);
  // The harness name rule (spec §5): what OLD must look like to be read as a deployed harness.
  const named = isHarnessName(old);
  if (!named || (await pathExists(old))) return readImageOrManifest(old);
  if (url === undefined) {
    try {
      return await readImageOrManifest(old);
    } catch (e) {
      if (e instanceof CliError && e.code === 'file-not-found') {
        throw new CliError(e.code, `${e.message} (to compare with the harness deployed as ${old}, give --url or set BERM_URL)`, e.details);
      }
      throw e;
    }
  }
  const { isBermClientError } = await import('@berm/client');
  const client = await ctx.connect(flags);
  let manifest: unknown;
  try {
    manifest = (await client.get(old)).manifest;
  } catch (e) {
    if (isBermClientError(e) && e.code === 'not-found') {
      throw new CliError('harness-not-found', `'${old}' is neither a file nor a harness deployed at ${client.url}`, {
        file: old,
        name: old,
        url: client.url,
        status: e.status,
      });
    }
    throw e;
  } finally {
    await client.close();
  }
  try {
    return Manifest.fromJSON(manifest);
  } catch (e) {
    throw inputError(`${client.url}/harnesses/${old}`, e);
  }
}

/** Whether anything is at `file`; a path that cannot be looked at counts as there, so reading it says why. */
async function pathExists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

async function format(found: Break[], as: (typeof BREAK_FORMATS)[number]): Promise<string> {
  switch (as) {
    case 'text':
      return formatBreaksText(found, await stdoutPaint());
    case 'json':
      return formatBreaksJson(found);
    case 'github':
      return formatBreaksGithub(found);
    case 'markdown':
      return formatBreaksMarkdown(found);
  }
}
