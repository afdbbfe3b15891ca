// The distribution client against Debian's docker-registry on loopback: push and pull by tag and digest,
// chunked uploads, a mount across repositories, range reads (and a registry that ignores Range), an index
// resolved to its wasm entry, basic auth (htpasswd) and the bearer token flow (a relay standing for a token
// registry), and each refusal with its code: digest mismatch, unknown media type, a layer over the bound,
// wrong credentials, an unreachable registry.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  buildArtifact,
  fetchBlob,
  fetchRange,
  MEDIA,
  OciError,
  parseReference,
  pushArtifact,
  Registry,
  resolve,
  sha256,
} from '../dist/index.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { describeRegistry, startRegistry, startRelay, type RunningRegistry } from './registry-server.js';

const env = { HOME: '/nonexistent', DOCKER_CONFIG: '/nonexistent' };

function artifact(image: Uint8Array, manifestJson = '{"abi":1}') {
  return buildArtifact({ image, manifestJson, version: '1.0.0', tools: ['a', 'b'], created: '2026-01-01T00:00:00Z' });
}

async function caught(p: Promise<unknown>): Promise<OciError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OciError) return e;
    throw e;
  }
  throw new Error('expected an OciError');
}

describeRegistry('the distribution client against docker-registry', { timeout: 60_000 }, () => {
  let open: RunningRegistry;
  let locked: RunningRegistry;
  beforeAll(async () => {
    [open, locked] = await Promise.all([startRegistry(), startRegistry({ users: { ci: 'right-password' } })]);
  });
  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop()]);
  });

  it('pushes, resolves by tag and by digest, and reads back the same bytes', async () => {
    const registry = new Registry(open.host, { env });
    const image = randomBytes(100_000);
    const a = artifact(image);
    const ref = parseReference(`oci://${open.host}/org/round:1.0.0`);
    const pushed = await pushArtifact(registry, ref, a);
    expect(pushed.digest).toBe(a.digest);
    expect(pushed.blobs.map((b) => b.how)).toEqual(['sent', 'sent', 'sent']);
    // Pushed again, every blob is already there.
    expect((await pushArtifact(registry, ref, a)).blobs.map((b) => b.how)).toEqual(['exists', 'exists', 'exists']);

    const byTag = await resolve(registry, ref);
    expect(byTag.digest).toBe(a.digest);
    expect(byTag.manifest.config.mediaType).toBe(MEDIA.wasmConfig);
    expect(byTag.layers.wasm.digest).toBe(sha256(image));
    expect(byTag.layers.bermManifest?.mediaType).toBe(MEDIA.bermManifest);
    const byDigest = await resolve(registry, parseReference(`${open.host}/org/round@${a.digest}`));
    expect(byDigest.digest).toBe(a.digest);
    const bytes = await fetchBlob(registry, ref, byTag.layers.wasm, { maxSize: 1 << 20 });
    expect(Buffer.from(bytes).equals(image)).toBe(true);
    await registry.close();
  });

  it('uploads in PATCH chunks past the threshold, and mounts from a repository of the same registry', async () => {
    const relay = await startRelay(open.host);
    const registry = new Registry(relay.host, { env, chunkSize: 64 * 1024 });
    const image = randomBytes(200_000);
    const a = artifact(image);
    await pushArtifact(registry, parseReference(`${relay.host}/org/chunked:1`), a);
    expect(relay.requests.filter((r) => r.method === 'PATCH').length).toBe(4);
    const report = await pushArtifact(registry, parseReference(`${relay.host}/other/copy:1`), a, { mountFrom: 'org/chunked' });
    expect(report.blobs.map((b) => b.how)).toEqual(['mounted', 'mounted', 'mounted']);
    const copy = await resolve(registry, parseReference(`${relay.host}/other/copy:1`));
    expect(
      Buffer.from(await fetchBlob(registry, parseReference(`${relay.host}/other/copy:1`), copy.layers.wasm, { maxSize: 1 << 20 })).equals(
        image,
      ),
    ).toBe(true);
    await registry.close();
    await relay.close();
  });

  it('reads a range where the registry honours it, and the whole blob, checked, where it does not', async () => {
    const image = randomBytes(50_000);
    const ref = parseReference(`${open.host}/org/range:1`);
    const setup = new Registry(open.host, { env });
    await pushArtifact(setup, ref, artifact(image));
    const { layers } = await resolve(setup, ref);
    await setup.close();

    const honest = new Registry(open.host, { env });
    const part = await fetchRange(honest, ref, layers.wasm, 100, 10, { maxSize: 1 << 20 });
    expect(part.partial).toBe(true);
    expect(Buffer.from(part.bytes).equals(image.subarray(100, 110))).toBe(true);
    await honest.close();

    const relay = await startRelay(open.host, { ignoreRange: true });
    const ignoring = new Registry(relay.host, { env });
    const whole = await fetchRange(ignoring, parseReference(`${relay.host}/org/range:1`), layers.wasm, 100, 10, { maxSize: 1 << 20 });
    expect(whole.partial).toBe(false);
    expect(whole.bytes.length).toBe(image.length);
    await ignoring.close();
    await relay.close();
  });

  it('resolves an index to its wasm entry', async () => {
    const registry = new Registry(open.host, { env });
    const a = artifact(randomBytes(1000));
    await pushArtifact(registry, parseReference(`${open.host}/org/indexed@${a.digest}`), a);
    // The registry refuses an index naming a manifest it lacks: the other platform's entry is a real one too.
    const other = artifact(randomBytes(500));
    await pushArtifact(registry, parseReference(`${open.host}/org/indexed@${other.digest}`), other);
    const index = new TextEncoder().encode(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA.index,
        manifests: [
          {
            mediaType: MEDIA.manifest,
            digest: other.digest,
            size: other.manifestBytes.length,
            platform: { architecture: 'amd64', os: 'linux' },
          },
          { mediaType: MEDIA.manifest, digest: a.digest, size: a.manifestBytes.length, platform: { architecture: 'wasm', os: 'wasip1' } },
        ],
      }),
    );
    await registry.send({
      method: 'PUT',
      url: '/v2/org/indexed/manifests/multi',
      repository: 'org/indexed',
      push: true,
      headers: { 'content-type': MEDIA.index },
      body: index,
      ok: [201],
      doing: 'pushing an index',
    });
    expect((await resolve(registry, parseReference(`${open.host}/org/indexed:multi`))).digest).toBe(a.digest);
    await registry.close();
  });

  it('refuses a layer whose bytes are not its digest, and a manifest that is not the one pinned', async () => {
    const image = randomBytes(5000);
    const a = artifact(image);
    const setup = new Registry(open.host, { env });
    await pushArtifact(setup, parseReference(`${open.host}/org/altered:1`), a);
    await setup.close();
    const relay = await startRelay(open.host, { alterBlob: sha256(image) });
    const registry = new Registry(relay.host, { env });
    const ref = parseReference(`${relay.host}/org/altered:1`);
    const { layers } = await resolve(registry, ref);
    const e = await caught(fetchBlob(registry, ref, layers.wasm, { maxSize: 1 << 20 }));
    expect(e.code).toBe('digest-mismatch');
    expect(e.message).toContain(sha256(image));
    await registry.close();
    await relay.close();

    const other = new Registry(open.host, { env });
    const wrongPin = parseReference(`${open.host}/org/altered@${sha256(new Uint8Array([9]))}`);
    expect((await caught(resolve(other, wrongPin))).code).toBe('artifact-not-found');
    await other.close();
  });

  it('refuses an artifact with no wasm layer (unknown-media-type), and a layer over the bound before reading it', async () => {
    const registry = new Registry(open.host, { env });
    const a = artifact(randomBytes(3000));
    const tar = { ...a.layers[0]!.descriptor, mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip' };
    const manifest = new TextEncoder().encode(JSON.stringify({ ...a.manifest, layers: [tar] }));
    await pushArtifact(registry, parseReference(`${open.host}/org/tarball:1`), a);
    await registry.send({
      method: 'PUT',
      url: '/v2/org/tarball/manifests/tar',
      repository: 'org/tarball',
      push: true,
      headers: { 'content-type': MEDIA.manifest },
      body: manifest,
      ok: [201],
      doing: 'pushing a container manifest',
    });
    const e = await caught(resolve(registry, parseReference(`${open.host}/org/tarball:tar`)));
    expect(e.code).toBe('unknown-media-type');
    expect(e.message).toContain('application/vnd.oci.image.layer.v1.tar+gzip');

    const ref = parseReference(`${open.host}/org/tarball:1`);
    const { layers } = await resolve(registry, ref);
    const big = await caught(fetchBlob(registry, ref, layers.wasm, { maxSize: 1000 }));
    expect(big.code).toBe('layer-too-large');
    await registry.close();
  });

  it('signs in with basic auth where the registry asks, and refuses wrong credentials without showing them', async () => {
    const ref = parseReference(`${locked.host}/org/private:1`);
    const anonymous = new Registry(locked.host, { env });
    const none = await caught(resolve(anonymous, ref));
    expect(none.code).toBe('registry-unauthorized');
    expect(none.message).toContain('no credential');
    await anonymous.close();

    const wrong = new Registry(locked.host, { env, credential: { username: 'ci', password: 'wrong-password' } });
    const refused = await caught(pushArtifact(wrong, ref, artifact(randomBytes(10))));
    expect(refused.code).toBe('registry-unauthorized');
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.toJSON()) + refused.message).not.toContain('wrong-password');
    await wrong.close();

    const right = new Registry(locked.host, { env, credential: { username: 'ci', password: 'right-password' } });
    const a = artifact(randomBytes(10));
    expect((await pushArtifact(right, ref, a)).digest).toBe(a.digest);
    expect((await resolve(right, ref)).digest).toBe(a.digest);
    await right.close();
  });

  it('takes a token from the realm of a Bearer challenge, with the credential as basic auth, one token per scope', async () => {
    const relay = await startRelay(open.host, { bearer: { ci: 'token-password' } });
    const ref = parseReference(`${relay.host}/org/tokened:1`);
    const registry = new Registry(relay.host, { env, credential: { username: 'ci', password: 'token-password' } });
    const a = artifact(randomBytes(10));
    await pushArtifact(registry, ref, a);
    expect((await resolve(registry, ref)).digest).toBe(a.digest);
    expect(relay.tokens).toEqual([
      { user: 'ci', scope: 'repository:org/tokened:pull,push' },
      { user: 'ci', scope: 'repository:org/tokened:pull' },
    ]);
    await registry.close();

    const wrong = new Registry(relay.host, { env, credential: { username: 'ci', password: 'nope-password' } });
    const e = await caught(resolve(wrong, ref));
    expect(e.code).toBe('registry-unauthorized');
    expect(e.message).toContain('wrong user or password');
    expect(e.message).not.toContain('nope-password');
    await wrong.close();
    await relay.close();
  });

  it('says a registry that cannot be reached is unreachable', async () => {
    const host = `127.0.0.1:${await closedPort()}`;
    const registry = new Registry(host, { env });
    const e = await caught(resolve(registry, parseReference(`${host}/org/gone:1`)));
    expect(e.code).toBe('registry-unreachable');
    expect(e.message).toContain(host);
    await registry.close();
  });
});
