import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { registryFlags } from '../registry/flags.js';
import { push } from '../actions/push.js';

export default class Push extends BaseCommand {
  static summary = 'Publish an image to an OCI registry.';
  static description =
    "Pushes IMAGE as a wasm OCI artifact (the CNCF layout wkg and runwasi read: an application/wasm layer under an application/vnd.wasm.config.v0+json config) with berm's merged manifest as a second small layer, so that `crab inspect REF` and `crab breaks` read what the image declares without downloading it. IMAGE may itself be a reference: the artifact is copied, its blobs mounted when both are on one registry. Prints the pushed manifest's digest. Credentials come from BERM_REGISTRY_AUTH or docker's config (`crab registry login`). Exits 2 on bad input or refused credentials, 3 when the registry cannot be reached.";
  static examples = [
    '<%= config.bin %> push build/weather.wasm oci://ghcr.io/org/weather:1.2.0',
    '<%= config.bin %> push --source https://github.com/org/weather build/weather.wasm ghcr.io/org/weather:latest',
  ];

  static args = {
    image: Args.string({ description: 'the wasm image to publish (a file, or a reference to copy)', required: true }),
    ref: Args.string({ description: 'where: oci://HOST/REPO:TAG', required: true }),
  };

  static flags = {
    ...registryFlags,
    source: Flags.string({
      description: 'the URL of the source repository, for the org.opencontainers.image.source annotation',
      helpValue: 'URL',
    }),
  };

  async run() {
    return this.act(await this.parse(Push), push);
  }
}
