import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { registryFlags } from '../registry/flags.js';
import { pull } from '../actions/pull.js';

export default class Pull extends BaseCommand {
  static summary = 'Fetch an image from an OCI registry.';
  static description =
    "Resolves REF to its manifest digest, downloads the wasm layer, checks both against their digests and the size bound, and writes the image to FILE (by default the repository's last component with .wasm, in the current directory). Prints the file and the pinned reference. Exits 1 when a digest does not match, 2 on bad input or refused credentials, 3 when the registry cannot be reached.";
  static examples = [
    '<%= config.bin %> pull oci://ghcr.io/org/weather:1.2.0',
    '<%= config.bin %> pull ghcr.io/org/weather@sha256:… -o weather.wasm',
  ];

  static args = {
    ref: Args.string({ description: 'oci://HOST/REPO:TAG or oci://HOST/REPO@sha256:…', required: true }),
  };

  static flags = {
    ...registryFlags,
    output: Flags.string({ char: 'o', description: 'the file to write', helpValue: 'FILE' }),
  };

  async run() {
    return this.act(await this.parse(Pull), pull);
  }
}
