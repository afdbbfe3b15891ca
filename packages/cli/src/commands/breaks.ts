import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type { Break } from '@berm/manifest';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { formatBreaksGithub } from '../format/breaks/github.js';
import { formatBreaksJson } from '../format/breaks/json.js';
import { formatBreaksMarkdown } from '../format/breaks/markdown.js';
import { formatBreaksText } from '../format/breaks/text.js';
import { readImageOrManifest } from '../input.js';

export const BREAK_FORMATS = ['text', 'json', 'github', 'markdown'] as const;

export default class Breaks extends BaseCommand {
  static summary = 'List every way NEW breaks a caller of OLD.';
  static description =
    'OLD and NEW are images (wasm or ELF) or manifest JSON files (as `inspect --json` prints them), told apart by content. Exits 1 when there is any break, 0 when there is none, 2 on bad input.';
  static examples = [
    '<%= config.bin %> breaks old.wasm new.wasm',
    '<%= config.bin %> breaks --format github manifest.json build/app.wasm',
    '<%= config.bin %> breaks --format markdown old.wasm new.wasm > comment.md',
  ];

  static args = {
    old: Args.string({ description: 'the image or manifest JSON callers use now', required: true }),
    new: Args.string({ description: 'the image or manifest JSON that would replace it', required: true }),
  };

  static flags = {
    format: Flags.option({
      description: 'text for people, json for programs, github for workflow annotations, markdown for a pull-request comment',
      options: BREAK_FORMATS,
      default: 'text' as const,
    })(),
  };

  async run(): Promise<Break[]> {
    const { args, flags } = await this.parse(Breaks);
    // One after the other, so that when both are bad the one reported is always OLD.
    const old = await readImageOrManifest(args.old);
    const next = await readImageOrManifest(args.new);
    const found = old.breaks(next);
    if (found.length > 0) this.answerNegatively('breaks-found');
    if (!this.jsonEnabled()) this.log(await format(found, flags.format));
    return found;
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
