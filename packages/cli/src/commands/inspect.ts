import { basename } from 'node:path';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type { ManifestData } from '@berm/manifest';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { renderManifest } from '@berm/format/manifest';
import { readImage } from '../input.js';
import { registryFlags, registrySettings } from '../registry/flags.js';
import { readImageOrReference } from '../registry/read.js';
import { tokenFlag } from '../token-flag.js';

export default class Inspect extends BaseCommand {
  static summary = 'Print the manifest an image carries.';
  static description =
    "Reads the .berm.abi section of a wasm module or ELF file without compiling or running anything, and prints its tools, events and deps. IMAGE may be a registry reference: the manifest is read from the artifact's berm layer (or by range reads of its wasm layer), never by downloading the image. With --json, prints exactly the merged manifest object.";
  static examples = [
    '<%= config.bin %> inspect examples/echo.wasm',
    '<%= config.bin %> inspect --json examples/echo.wasm > manifest.json',
    '<%= config.bin %> inspect oci://ghcr.io/org/weather:latest',
  ];

  static args = {
    image: Args.string({
      description: 'a wasm module or ELF file with a .berm.abi section, or a registry reference (oci://HOST/REPO:TAG)',
      required: true,
    }),
  };

  // Not the shared daemon flags: here no address means no daemon is asked (rather than the
  // default one), and the client they come with would load on every inspect.
  static flags = {
    url: Flags.string({
      description: "address of bermd's control API: declared programs not deployed there are marked",
      env: 'BERM_URL',
      helpValue: 'URL',
    }),
    token: tokenFlag,
    ...registryFlags,
  };

  async run(): Promise<ManifestData> {
    const { args, flags } = await this.parse(Inspect);
    const manifest = await readImageOrReference(args.image, () => readImage(args.image), registrySettings(flags));
    if (!this.jsonEnabled()) {
      // Nothing to mark, nothing to ask: a BERM_URL whose daemon is down must not fail the command.
      const deployed = manifest.data.deps.programs.length > 0 ? await this.deployedPrograms(flags) : undefined;
      this.log(renderManifest(manifest.data, { name: basename(args.image), paint: await stdoutPaint(), deployed }));
    }
    return manifest.toJSON();
  }

  /**
   * The names deployed on the daemon, to mark declared programs that are not; undefined when
   * no daemon address is given, and then nothing is marked. Only the human view asks: `--json`
   * is the manifest and nothing else.
   */
  protected async deployedPrograms(flags: { url?: string; token?: string }): Promise<ReadonlySet<string> | undefined> {
    if (flags.url === undefined) return undefined;
    const client = await this.connect(flags);
    try {
      return new Set((await client.list()).map((h) => h.name));
    } finally {
      await client.close();
    }
  }
}
