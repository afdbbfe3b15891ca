import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { stat } from 'node:fs/promises';
import { Manifest, type Break } from '@berm/manifest';
import { isHarnessName } from '@berm/protocol';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { formatBreaksGithub } from '@berm/format/breaks/github';
import { formatBreaksJson } from '@berm/format/breaks/json';
import { formatBreaksMarkdown } from '@berm/format/breaks/markdown';
import { formatBreaksText } from '@berm/format/breaks/text';
import { CliError } from '../failure.js';
import { inputError, readImageOrManifest } from '../input.js';
import { registryFlags, registrySettings, type RegistrySettings } from '../registry/flags.js';
import { readImageOrReference } from '../registry/read.js';
import { tokenFlag } from '../token-flag.js';

export const BREAK_FORMATS = ['text', 'json', 'github', 'markdown'] as const;

export default class Breaks extends BaseCommand {
  static summary = 'List every way NEW breaks a caller of OLD.';
  static description =
    'OLD and NEW are images (wasm or ELF) or manifest JSON files (as `inspect --json` prints them), told apart by content, or registry references (oci://HOST/REPO:TAG; a bare HOST/REPO:TAG when no such file exists), whose manifest is read without downloading the image. With a daemon address (--url or BERM_URL), OLD may instead name a deployed harness: a path that exists is always read as a file; otherwise an OLD that is a harness name is compared as deployed under that name. Exits 1 when there is any break, 0 when there is none, 2 on bad input, 3 when the daemon cannot be reached.';
  static examples = [
    '<%= config.bin %> breaks old.wasm new.wasm',
    '<%= config.bin %> breaks --format github oci://ghcr.io/org/weather:latest build/weather.wasm',
    '<%= config.bin %> breaks --format github manifest.json build/app.wasm',
    '<%= config.bin %> breaks --format markdown old.wasm new.wasm > comment.md',
    'BERM_URL=http://127.0.0.1:7477 <%= config.bin %> breaks --format github weather build/weather.wasm',
  ];

  static args = {
    old: Args.string({
      description: 'the image or manifest JSON callers use now, or with --url the name of a deployed harness',
      required: true,
    }),
    new: Args.string({ description: 'the image or manifest JSON that would replace it', required: true }),
  };

  static flags = {
    format: Flags.option({
      description: 'text for people, json for programs, github for workflow annotations, markdown for a pull-request comment',
      options: BREAK_FORMATS,
      default: 'text' as const,
    })(),
    // Not the shared daemon flags: without an address no daemon is asked, and OLD is a file.
    url: Flags.string({
      description: "address of bermd's control API: OLD may then name a harness deployed there",
      env: 'BERM_URL',
      helpValue: 'URL',
    }),
    token: tokenFlag,
    ...registryFlags,
  };

  async run(): Promise<Break[]> {
    const { args, flags } = await this.parse(Breaks);
    // One after the other, so that when both are bad the one reported is always OLD.
    const settings = registrySettings(flags);
    const old = await this.readOld(args.old, flags, settings);
    const next = await readImageOrReference(args.new, () => readImageOrManifest(args.new), settings);
    const found = old.breaks(next);
    if (found.length > 0) this.answerNegatively('breaks-found');
    if (!this.jsonEnabled()) this.log(await format(found, flags.format));
    return found;
  }

  /**
   * OLD as a file when the path exists or no daemon address is given; otherwise, when it is a
   * harness name, the manifest of the image deployed under that name.
   */
  private async readOld(old: string, flags: { url?: string; token?: string }, settings: RegistrySettings): Promise<Manifest> {
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
          throw new CliError(
            e.code,
            `${e.message} (to compare with the harness deployed as ${old}, give --url or set BERM_URL)`,
            e.details,
          );
        }
        throw e;
      }
    }
    const { isBermClientError } = await import('@berm/client');
    const client = await this.connect(flags);
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
