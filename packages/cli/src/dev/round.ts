/**
 * One round of `crab dev`: build the project as `crab build` does (the compiler's report on stderr,
 * errors located in the source), say what the build changes in the manifest the daemon serves under
 * the project's name, and deploy it; the gate's verdict is the daemon's, shown as `crab deploy` shows it.
 * A build that fails or a deploy the daemon refuses leaves what is served as it was, and the loop goes on.
 */
import { type BermClient, isBermClientError } from '@berm/client';
import { gateVerdict, renderDeploy } from '@berm/format/deploy';
import { isBreaksCallers, refusalReason, renderRefusal } from '@berm/format/gate';
import { manifestChange, renderManifestChange } from '@berm/format/manifest-change';
import type { Paint } from '@berm/format/paint';
import { printable } from '@berm/format/printable';
import type { ManifestData } from '@berm/manifest';
import { buildProject } from '../project-build.js';

export interface RoundOptions {
  dir: string;
  client: BermClient;
  /** Deploy past the gate's refusal, as `crab deploy --force`. */
  force: boolean;
  paint: Paint;
}

const out = (text: string): void => {
  process.stdout.write(`${text}\n`);
};
const err = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

export async function round(options: RoundOptions): Promise<void> {
  const { client, paint } = options;
  const started = performance.now();
  let built: Awaited<ReturnType<typeof buildProject>>;
  try {
    built = await buildProject(options.dir, { optimize: false, quiet: false });
  } catch (e) {
    const { isGuestError } = await import('@berm/guest/build');
    if (!isGuestError(e)) throw e;
    // The compiler's report is already on stderr, located (file(line,column)); this says what it meant.
    err(`${paint.red('not deployed:')} ${printable(e.message)}; what was served is still served`);
    return;
  }
  const { name, manifest, bytes } = built.result;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  out(
    `${paint.dim('built')} ${printable(name)}${manifest.version ? ` ${printable(manifest.version)}` : ''} ${paint.dim(`in ${seconds}s`)}`,
  );
  const served = await servedManifest(client, name);
  out(renderManifestChange(manifestChange(served, manifest), paint));
  try {
    const result = await client.deploy(name, bytes, { force: options.force });
    out(renderDeploy(result, paint));
    out(gateVerdict(result.reported, paint));
  } catch (e) {
    // The daemon's answer about this image (the gate, a check); a failure to reach it is the loop's concern.
    if (!isBermClientError(e) || e.status === undefined || e.status === 401 || e.code === 'insufficient-scope') throw e;
    if (isBreaksCallers(e.body)) {
      out(renderRefusal(e.body, paint));
      err(
        `${paint.red('not deployed:')} ${refusalReason(e.body)}; ${printable(name)} still serves what it served; crab dev --force deploys past the gate`,
      );
    } else {
      err(`${paint.red('not deployed:')} ${printable(e.message)} (${printable(e.code)}); what was served is still served`);
    }
  }
}

/** The manifest served under `name`, or undefined when nothing is. */
async function servedManifest(client: BermClient, name: string): Promise<ManifestData | undefined> {
  try {
    return (await client.get(name)).manifest;
  } catch (e) {
    if (isBermClientError(e) && e.code === 'not-found') return undefined;
    throw e;
  }
}
