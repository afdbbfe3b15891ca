import { readFile } from 'node:fs/promises';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { Manifest } from '@berm/manifest';
import { buildArtifact, formatReference, pushArtifact, type PushReport } from '@berm/oci';
import { BaseCommand } from '../base-command.js';
import { CliError } from '../failure.js';
import { inputError } from '../input.js';
import { registryFlags, registrySettings } from '../registry/flags.js';
import { openRegistry, pullImage, referenceOf } from '../registry/images.js';

export interface PushResult extends PushReport {
  reference: string;
}

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

  async run(): Promise<PushResult> {
    const { args, flags } = await this.parse(Push);
    const settings = registrySettings(flags);
    const target = await referenceOf(args.ref);
    if (target === undefined || target.tag === undefined) {
      throw new CliError('bad-reference', `'${args.ref}' is not a reference to push to: give oci://HOST/REPO:TAG`, { reference: args.ref });
    }
    const from = await referenceOf(args.image);
    let bytes: Uint8Array;
    if (from !== undefined) {
      bytes = (await pullImage(from, settings)).bytes;
    } else {
      try {
        bytes = await readFile(args.image);
      } catch (e) {
        throw inputError(args.image, e);
      }
    }
    let manifest: Manifest;
    try {
      manifest = Manifest.fromImage(bytes);
    } catch (e) {
      throw inputError(args.image, e);
    }
    // SOURCE_DATE_EPOCH, as reproducible builds set it, makes the same image push as the same digest.
    const epoch = Number(process.env.SOURCE_DATE_EPOCH);
    const created = new Date(Number.isFinite(epoch) && process.env.SOURCE_DATE_EPOCH !== '' ? epoch * 1000 : Date.now())
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
    const artifact = buildArtifact({
      image: bytes,
      manifestJson: JSON.stringify(manifest.toJSON()),
      version: manifest.data.version,
      tools: manifest.data.tools.map((t) => t.name),
      ...(flags.source === undefined ? {} : { source: flags.source }),
      created,
    });
    const registry = openRegistry(target, settings);
    let report: PushReport;
    try {
      const mountFrom = from !== undefined && from.host === target.host ? from.repository : undefined;
      report = await pushArtifact(registry, target, artifact, mountFrom === undefined ? {} : { mountFrom });
    } finally {
      await registry.close();
    }
    const reference = formatReference(target, report.digest);
    if (!this.jsonEnabled()) this.log(report.digest);
    return { reference, ...report };
  }
}
