// crab push, pull, and a registry reference wherever an image path goes (inspect, breaks, deploy), against
// Debian's docker-registry on loopback and a real bermd; what crab pushes read by skopeo, and what skopeo
// pushes in the standard layout (no berm layer) read and deployed by crab; each refusal's code and exit.
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import {
  describeRegistry,
  SKOPEO,
  sha256,
  skopeoPush,
  startRegistry,
  startRelay,
  type RunningRegistry,
} from '../../oci/test/registry-server.js';
import { Scratch, runCli } from './helpers/cli.js';

const run = promisify(execFile);

let open: RunningRegistry;
let locked: RunningRegistry;
let d: RunningDaemon;
let scratch: Scratch;
const images: Record<string, Uint8Array> = {};
const files: Record<string, string> = {};

// No credentials but those a test gives: docker's config is looked for where there is none.
const base = () => ({
  DOCKER_CONFIG: path.join(scratch.dir, 'no-docker'),
  BERM_REGISTRY_AUTH: undefined,
  BERM_URL: d.url,
  BERM_TOKEN: undefined,
});

describeRegistry('crab and OCI registries', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    [open, locked, d] = await Promise.all([startRegistry(), startRegistry({ users: { ci: 'right-password' } }), startDaemon()]);
    scratch = await Scratch.create();
    images.v1 = await harnessImage(manifestWithTools(['echo', 'size'], { version: '1.0.0' }));
    images.v2 = await harnessImage(manifestWithTools(['echo'], { version: '2.0.0' }));
    files.v1 = await scratch.write('v1.wasm', images.v1);
    files.v2 = await scratch.write('v2.wasm', images.v2);
  });

  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop(), d?.stop()]);
    if (d) await removeDir(d.stateDir);
    await scratch?.remove();
  });

  it('pushes (printing the digest) and pulls the same bytes back, by tag and by digest', async () => {
    const ref = `oci://${open.host}/org/round:1.0.0`;
    const pushed = await runCli(['push', files.v1!, ref], { env: base() });
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
    const digest = pushed.stdout.trim();
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const out = path.join(scratch.dir, 'pulled.wasm');
    const pulled = await runCli(['pull', '--json', ref, '-o', out], { env: base() });
    expect(pulled.code).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({ digest, image_digest: sha256(images.v1!), reference: `${ref}@${digest}` });
    expect(Buffer.from(await readFile(out)).equals(Buffer.from(images.v1!))).toBe(true);

    const bare = await runCli(['pull', `${open.host}/org/round@${digest}`, '-o', out], { env: base() });
    expect(bare.code).toBe(0);
    expect(sha256(await readFile(out))).toBe(sha256(images.v1!));
  });

  it('inspects a reference from its berm layer without a request for the image blob', async () => {
    await runCli(['push', files.v1!, `oci://${open.host}/org/inspected:1`], { env: base() });
    const relay = await startRelay(open.host);
    const r = await runCli(['inspect', '--json', `oci://${relay.host}/org/inspected:1`], { env: base() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const local = await runCli(['inspect', '--json', files.v1!], { env: base() });
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(local.stdout));
    const blobs = relay.requests.filter((q) => q.path.includes('/blobs/')).map((q) => q.path.split('/').pop());
    expect(blobs.length).toBe(1);
    expect(blobs).not.toContain(sha256(images.v1!));
    await relay.close();

    const human = await runCli(['inspect', `oci://${open.host}/org/inspected:1`], { env: base() });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('echo');
  });

  it('compares a pushed old version with a new file (crab breaks REF FILE), either side a reference', async () => {
    await runCli(['push', files.v1!, `oci://${open.host}/org/gate:latest`], { env: base() });
    const r = await runCli(['breaks', '--format', 'json', `${open.host}/org/gate:latest`, files.v2!], { env: base() });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).map((b: { code: string }) => b.code)).toContain('tool-removed');
    const same = await runCli(['breaks', files.v1!, `oci://${open.host}/org/gate:latest`], { env: base() });
    expect(same.code).toBe(0);
  });

  it('deploys by tag and by digest, recording the reference and digest it came from', async () => {
    const ref = `oci://${open.host}/org/deployed:stable`;
    const digest = (await runCli(['push', files.v1!, ref], { env: base() })).stdout.trim();
    let r = await runCli(['deploy', 'fromtag', ref], { env: base() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`source ${ref} (${digest.slice(7, 19)})`);
    r = await runCli(['deploy', '--json', 'fromdigest', `${open.host}/org/deployed@${digest}`], { env: base() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).entry.source).toEqual({ reference: `oci://${open.host}/org/deployed@${digest}`, digest });

    const ls = JSON.parse((await runCli(['ls', '--json'], { bin: 'berm', env: base() })).stdout) as {
      name: string;
      digest: string;
      source?: unknown;
    }[];
    const fromTag = ls.find((h) => h.name === 'fromtag')!;
    expect(fromTag.digest).toBe(sha256(images.v1!));
    expect(fromTag.source).toEqual({ reference: ref, digest });
    const table = await runCli(['ls'], { bin: 'berm', env: base() });
    expect(table.stdout.split('\n')[0]).toMatch(/\s+SOURCE$/);
    const history = JSON.parse((await runCli(['history', '--json', 'fromtag'], { bin: 'berm', env: base() })).stdout);
    expect(history[0].source).toEqual({ reference: ref, digest });

    const pinned = await runCli(['deploy', '--require-digest', 'pinned', ref], { env: base() });
    expect(pinned.code).toBe(2);
    expect(pinned.stderr).toContain('--require-digest');
  });

  it('deploys the digest a tag resolved to, though the tag moves before the image is read', async () => {
    const tag = `${open.host}/org/moving:latest`;
    const first = (await runCli(['push', files.v1!, `oci://${tag}`], { env: base() })).stdout.trim();
    let moved = false;
    const relay = await startRelay(open.host, {
      before: async (method, p) => {
        if (!moved && method === 'GET' && p.includes('/blobs/')) {
          moved = true;
          const again = await runCli(['push', files.v2!, `oci://${tag}`], { env: base() });
          expect(again.code).toBe(0);
        }
      },
    });
    const r = await runCli(['deploy', '--json', 'moving', `oci://${relay.host}/org/moving:latest`], { env: base() });
    expect(r.stderr).toBe('');
    expect(moved).toBe(true);
    const result = JSON.parse(r.stdout);
    expect(result.digest).toBe(sha256(images.v1!));
    expect(result.entry.source.digest).toBe(first);
    await relay.close();
  });

  it("lets skopeo read and copy what crab pushed: the wasm layout, the layer's bytes the image", async () => {
    const ref = `${open.host}/org/interop:1`;
    await runCli(['push', files.v1!, `oci://${ref}`], { env: base() });
    const { stdout } = await run(SKOPEO!, ['inspect', '--raw', '--tls-verify=false', `docker://${ref}`]);
    const manifest = JSON.parse(stdout);
    expect(manifest.config.mediaType).toBe('application/vnd.wasm.config.v0+json');
    expect(manifest.layers.map((l: { mediaType: string }) => l.mediaType)).toEqual([
      'application/wasm',
      'application/vnd.berm.manifest.v1+json',
    ]);
    expect(manifest.annotations).toMatchObject({ 'org.opencontainers.image.version': '1.0.0', 'io.berm.tools': 'echo,size' });
    const dir = path.join(scratch.dir, 'skopeo-dir');
    await run(SKOPEO!, ['copy', '--insecure-policy', '--src-tls-verify=false', `docker://${ref}`, `dir:${dir}`]);
    const layer = await readFile(path.join(dir, sha256(images.v1!).slice(7)));
    expect(Buffer.from(layer).equals(Buffer.from(images.v1!))).toBe(true);
    const config = JSON.parse(await readFile(path.join(dir, manifest.config.digest.slice(7)), 'utf8'));
    expect(config).toMatchObject({ architecture: 'wasm', os: 'wasip1', layerDigests: [sha256(images.v1!)] });
  });

  it('inspects (by range reads) and deploys an artifact skopeo pushed in the standard layout, without the berm layer', async () => {
    const config = new TextEncoder().encode(
      JSON.stringify({ created: '2026-01-01T00:00:00Z', architecture: 'wasm', os: 'wasip1', layerDigests: [sha256(images.v2!)] }),
    );
    await skopeoPush(path.join(scratch.dir, 'layout'), 'v2', `${open.host}/org/plain:v2`, {
      config: { mediaType: 'application/vnd.wasm.config.v0+json', bytes: config },
      layers: [{ mediaType: 'application/wasm', bytes: images.v2! }],
    });

    const relay = await startRelay(open.host);
    const r = await runCli(['inspect', '--json', `oci://${relay.host}/org/plain:v2`], { env: base() });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).version).toBe('2.0.0');
    const blobReads = relay.requests.filter((q) => q.path.endsWith(sha256(images.v2!)));
    expect(blobReads.length).toBeGreaterThan(0);
    expect(blobReads.every((q) => q.range !== undefined)).toBe(true);
    await relay.close();

    const deployed = await runCli(['deploy', '--json', 'plain', `oci://${open.host}/org/plain:v2`], { env: base() });
    expect(deployed.code).toBe(0);
    expect(JSON.parse(deployed.stdout).digest).toBe(sha256(images.v2!));
  });

  it('refuses an altered layer (digest-mismatch, exit 1) and a layer over --max-image-size (exit 2)', async () => {
    await runCli(['push', files.v1!, `oci://${open.host}/org/guarded:1`], { env: base() });
    const relay = await startRelay(open.host, { alterBlob: sha256(images.v1!) });
    const r = await runCli(['pull', '--json', `oci://${relay.host}/org/guarded:1`, '-o', path.join(scratch.dir, 'x.wasm')], {
      env: base(),
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('digest-mismatch');
    const deployed = await runCli(['deploy', 'guarded', `oci://${relay.host}/org/guarded:1`], { env: base() });
    expect(deployed.code).toBe(1);
    expect(deployed.stderr).toContain('digest');
    await relay.close();

    const big = await runCli(
      ['pull', '--max-image-size', '1K', `oci://${open.host}/org/guarded:1`, '-o', path.join(scratch.dir, 'y.wasm')],
      { env: base() },
    );
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('--max-image-size');
  });

  it('signs in from BERM_REGISTRY_AUTH or docker config, and refuses wrong credentials without printing them (exit 2)', async () => {
    const ref = `oci://${locked.host}/org/private:1`;
    const wrong = JSON.stringify({ auths: { [locked.host]: { username: 'ci', password: 'hunter2-wrong' } } });
    const refused = await runCli(['push', files.v1!, ref], { env: { ...base(), BERM_REGISTRY_AUTH: wrong } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('registry login');
    expect(refused.stderr + refused.stdout).not.toContain('hunter2-wrong');

    const right = JSON.stringify({ auths: { [locked.host]: { username: 'ci', password: 'right-password' } } });
    expect((await runCli(['push', files.v1!, ref], { env: { ...base(), BERM_REGISTRY_AUTH: right } })).code).toBe(0);

    const config = path.join(scratch.dir, 'docker');
    await mkdir(config, { recursive: true });
    await writeFile(
      path.join(config, 'config.json'),
      JSON.stringify({ auths: { [locked.host]: { auth: Buffer.from('ci:right-password').toString('base64') } } }),
    );
    const viaDocker = await runCli(['inspect', '--json', ref], { env: { ...base(), DOCKER_CONFIG: config } });
    expect(viaDocker.stderr).toBe('');
    expect(JSON.parse(viaDocker.stdout).version).toBe('1.0.0');
  });

  it('logs in (password from stdin) to docker config, uses it, and logs out', async () => {
    const config = path.join(scratch.dir, 'docker-login');
    const env = { ...base(), DOCKER_CONFIG: config };
    const bad = await runCli(['registry', 'login', locked.host, '-u', 'ci', '--password-stdin'], { env, input: 'not-the-password\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).not.toContain('not-the-password');
    const login = await runCli(['registry', 'login', locked.host, '-u', 'ci', '--password-stdin'], { env, input: 'right-password\n' });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout + login.stderr).not.toContain('right-password');
    expect(await readdir(config)).toContain('config.json');
    expect((await runCli(['inspect', '--json', `oci://${locked.host}/org/private:1`], { env })).code).toBe(0);
    expect((await runCli(['registry', 'logout', locked.host], { env })).code).toBe(0);
    expect((await runCli(['inspect', '--json', `oci://${locked.host}/org/private:1`], { env })).code).toBe(2);
  });

  it('says an unreachable registry is unreachable (exit 3), and a malformed reference is bad input (exit 2)', async () => {
    const host = `127.0.0.1:${await closedPort()}`;
    const r = await runCli(['inspect', `oci://${host}/org/gone:1`], { env: base() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(host);
    const bad = await runCli(['pull', 'oci://Example.com/UPPER:1'], { env: base() });
    expect(bad.code).toBe(2);
  });
});
