// Artifacts berm does not read, at the command line, against Debian's docker-registry on loopback: a
// container image skopeo pushed (its layer a tar, no module) and an index @berm/oci's low-level calls
// pushed whose only entry is for linux/amd64. `crab inspect` and `crab pull` refuse each with
// unknown-media-type (exit 2), saying which type it met and what berm reads.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { MEDIA, Registry } from '@berm/oci';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRegistry, SKOPEO, sha256, skopeoPush, startRegistry, type RunningRegistry } from '../../oci/test/registry-server.js';
import { Scratch, runCli } from './helpers/cli.js';

const run = promisify(execFile);
const TAR_LAYER = 'application/vnd.oci.image.layer.v1.tar';

let open: RunningRegistry;
let scratch: Scratch;
/** The layer type of the container image as the registry holds it. */
let layerType: string;

const base = () => ({ DOCKER_CONFIG: path.join(scratch.dir, 'no-docker'), BERM_REGISTRY_AUTH: undefined });

/** A container image in an OCI layout, pushed by skopeo: a tar layer and a container config. Answers the digest and size of the manifest the registry holds, and its layer's type. */
async function pushContainer(ref: string): Promise<{ digest: string; size: number; layer: string }> {
  // An empty tar: two zero blocks.
  const tar = new Uint8Array(1024);
  const config = new TextEncoder().encode(
    JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [sha256(tar)] }, config: {} }),
  );
  await skopeoPush(path.join(scratch.dir, 'container-layout'), 'c', ref, {
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: config },
    layers: [{ mediaType: TAR_LAYER, bytes: tar }],
  });
  // skopeo may compress the layer on the way: what the registry holds is what the index must name.
  const { stdout } = await run(SKOPEO!, ['inspect', '--raw', '--tls-verify=false', `docker://${ref}`], { encoding: 'buffer' });
  const pushed = JSON.parse(stdout.toString('utf8')) as { layers: { mediaType: string }[] };
  return { digest: sha256(stdout), size: stdout.length, layer: pushed.layers[0]!.mediaType };
}

describeRegistry('crab refuses artifacts it does not read', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    open = await startRegistry();
    scratch = await Scratch.create();
    const { layer, ...container } = await pushContainer(`${open.host}/org/container:1`);
    layerType = layer;
    expect(layerType.startsWith(TAR_LAYER)).toBe(true);
    const index = new TextEncoder().encode(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA.index,
        manifests: [{ mediaType: MEDIA.manifest, ...container, platform: { os: 'linux', architecture: 'amd64' } }],
      }),
    );
    const registry = new Registry(open.host, { credential: null });
    try {
      await registry.send({
        method: 'PUT',
        url: '/v2/org/container/manifests/multi',
        repository: 'org/container',
        push: true,
        headers: { 'content-type': MEDIA.index },
        body: index,
        ok: [201],
        doing: 'pushing an index with no wasm entry',
      });
    } finally {
      await registry.close();
    }
  });

  afterAll(async () => {
    await open?.stop();
    await scratch?.remove();
  });

  it('refuses a container image (a tar layer, no module) on inspect and pull: unknown-media-type, exit 2, the layer type named', async () => {
    const ref = `oci://${open.host}/org/container:1`;
    for (const args of [
      ['inspect', ref],
      ['pull', ref, '-o', path.join(scratch.dir, 'c.wasm')],
    ]) {
      const json = await runCli([args[0]!, '--json', ...args.slice(1)], { env: base() });
      expect(json.code, args[0]).toBe(2);
      const error = JSON.parse(json.stdout).error;
      expect(error.code).toBe('unknown-media-type');
      expect(error.message).toContain(`its layers are ${layerType},`);
      expect(error.message).toContain(MEDIA.wasm);
      expect(error.message).toContain('crab push');

      const human = await runCli(args, { env: base() });
      expect(human.code).toBe(2);
      expect(human.stdout).toBe('');
      expect(human.stderr).toContain(layerType);
    }
  });

  it('refuses an index with no wasm entry on inspect and pull, naming the index type, its platforms and what berm reads', async () => {
    const ref = `oci://${open.host}/org/container:multi`;
    for (const args of [
      ['inspect', ref],
      ['pull', ref, '-o', path.join(scratch.dir, 'm.wasm')],
    ]) {
      const json = await runCli([args[0]!, '--json', ...args.slice(1)], { env: base() });
      expect(json.code, args[0]).toBe(2);
      const error = JSON.parse(json.stdout).error;
      expect(error.code).toBe('unknown-media-type');
      expect(error.message).toContain(MEDIA.index);
      expect(error.message).toContain('linux/amd64');
      expect(error.message).toContain(`a module (${MEDIA.wasm})`);
      expect(error.platforms).toEqual(['linux/amd64']);
    }
  });
});
