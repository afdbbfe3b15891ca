import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { registryFlags } from '../registry/flags.js';
import { tokenFlag } from '../token-flag.js';
import { BREAK_FORMATS, breaks } from '../actions/breaks.js';

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

  async run() {
    return this.act(await this.parse(Breaks), breaks);
  }
}
