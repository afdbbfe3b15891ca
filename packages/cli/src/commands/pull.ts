import { writeFile } from 'node:fs/promises';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { CliError } from '../failure.js';
import { inputError } from '../input.js';
import { registryFlags, registrySettings } from '../registry/flags.js';
import { pullImage, referenceOf } from '../registry/images.js';

export interface PullResult {
  reference: string;
  digest: string;
  image_digest: string;
  size: number;
  file: string;
}

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

  async run(): Promise<PullResult> {
    const { args, flags } = await this.parse(Pull);
    const ref = await referenceOf(args.ref);
    if (ref === undefined)
      throw new CliError('bad-reference', `'${args.ref}' is not a registry reference: give oci://HOST/REPO:TAG`, { reference: args.ref });
    const pulled = await pullImage(ref, registrySettings(flags));
    const file = flags.output ?? `${ref.repository.split('/').pop()}.wasm`;
    try {
      await writeFile(file, pulled.bytes);
    } catch (e) {
      throw inputError(file, e);
    }
    if (!this.jsonEnabled()) this.log(`${file} ← ${pulled.pinned}`);
    return {
      reference: pulled.pinned,
      digest: pulled.resolved.digest,
      image_digest: pulled.resolved.layers.wasm.digest,
      size: pulled.bytes.length,
      file,
    };
  }
}
