import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { registryFlags } from '../registry/flags.js';
import { tokenFlag } from '../token-flag.js';
import { inspect } from '../actions/inspect.js';

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

  async run() {
    return this.act(await this.parse(Inspect), inspect);
  }
}
