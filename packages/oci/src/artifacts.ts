/** Pushing and pulling an artifact through a `Registry`: the steps of the distribution spec in order, each digest checked. */
import { OciError } from './errors.js';
import {
  type Artifact,
  type ArtifactLayers,
  artifactLayers,
  type Blob,
  type Descriptor,
  type ImageManifest,
  MANIFEST_ACCEPT,
  MEDIA,
  pickFromIndex,
  readImageManifest,
  sha256,
} from './layout.js';
import { formatReference, manifestKey, type Reference } from './reference.js';
import { type Answer, first, type Registry } from './registry.js';

/** The most bytes a manifest may have: the distribution registry refuses more than 4 MiB itself. */
const MAX_MANIFEST = 4 * 1024 * 1024;

export interface Resolved {
  /** The digest of the image manifest (an index resolved to its wasm entry). */
  digest: string;
  manifest: ImageManifest;
  layers: ArtifactLayers;
}

/**
 * The image manifest `ref` names, its digest checked against the one asked for (and against the one the
 * registry says it sent): a manifest that is not what the digest names is `digest-mismatch`.
 */
export async function resolve(registry: Registry, ref: Reference): Promise<Resolved> {
  const where = formatReference(ref);
  let answer = await getManifest(registry, ref, manifestKey(ref), where);
  let digest = checkManifestDigest(answer, ref.digest, where);
  let type = mediaTypeOf(answer);
  if (type === MEDIA.index || type === MEDIA.dockerList) {
    const entry = pickFromIndex(answer.body, where);
    answer = await getManifest(registry, ref, entry.digest, where);
    digest = checkManifestDigest(answer, entry.digest, where);
    type = mediaTypeOf(answer);
  }
  const manifest = readImageManifest(answer.body, type, where);
  return { digest, manifest, layers: artifactLayers(manifest, where) };
}

function mediaTypeOf(answer: Answer): string | undefined {
  try {
    const value = JSON.parse(new TextDecoder().decode(answer.body)) as { mediaType?: unknown };
    if (typeof value.mediaType === 'string') return value.mediaType;
  } catch {
    // the image manifest reader says what is wrong with it
  }
  return first(answer.headers['content-type'])?.split(';')[0]?.trim();
}

async function getManifest(registry: Registry, ref: Reference, key: string, where: string): Promise<Answer> {
  return registry.send({
    method: 'GET',
    url: `/v2/${ref.repository}/manifests/${key}`,
    repository: ref.repository,
    headers: { accept: MANIFEST_ACCEPT },
    ok: [200],
    limit: MAX_MANIFEST,
    tooLarge: () =>
      new OciError('layer-too-large', `the manifest of ${where} is over ${MAX_MANIFEST} bytes: it is not one a wasm artifact has`, {
        reference: where,
      }),
    doing: `reading the manifest of ${where}`,
  });
}

function checkManifestDigest(answer: Answer, expected: string | undefined, where: string): string {
  const actual = sha256(answer.body);
  const claimed = first(answer.headers['docker-content-digest']);
  const want = expected ?? (claimed?.startsWith('sha256:') ? claimed : undefined);
  if (want !== undefined && want !== actual) {
    throw new OciError(
      'digest-mismatch',
      `the manifest of ${where} has digest ${actual}, not ${want}: it changed on the way or the registry is not to be trusted`,
      {
        reference: where,
        expected: want,
        actual,
      },
    );
  }
  return actual;
}

export interface BlobOptions {
  /** Refuse a blob larger than this before reading it (`layer-too-large`). */
  maxSize: number;
}

/** A blob whole, its size bounded and its digest checked. */
export async function fetchBlob(registry: Registry, ref: Reference, d: Descriptor, options: BlobOptions): Promise<Uint8Array> {
  const where = formatReference(ref);
  const tooLarge = () =>
    new OciError(
      'layer-too-large',
      `the ${d.mediaType} layer of ${where} is ${d.size} bytes, over the ${options.maxSize} allowed (--max-image-size)`,
      {
        reference: where,
        size: d.size,
        max: options.maxSize,
      },
    );
  if (d.size > options.maxSize) throw tooLarge();
  const answer = await registry.send({
    method: 'GET',
    url: `/v2/${ref.repository}/blobs/${d.digest}`,
    repository: ref.repository,
    ok: [200],
    limit: Math.min(options.maxSize, d.size),
    tooLarge: () =>
      d.size > options.maxSize
        ? tooLarge()
        : new OciError('digest-mismatch', `the ${d.mediaType} layer of ${where} is longer than the ${d.size} bytes its manifest says`, {
            reference: where,
          }),
    doing: `reading the ${d.mediaType} layer of ${where}`,
  });
  const actual = sha256(answer.body);
  if (actual !== d.digest) {
    throw new OciError(
      'digest-mismatch',
      `the ${d.mediaType} layer of ${where} has digest ${actual}, not ${d.digest} as its manifest says: it changed on the way`,
      {
        reference: where,
        expected: d.digest,
        actual,
      },
    );
  }
  return answer.body;
}

/**
 * `length` bytes of a blob from `offset`: `bytes` with `partial` true when the registry honoured the Range
 * header (206), else the whole blob (a registry may ignore Range), bounded by `maxSize` and checked.
 */
export async function fetchRange(
  registry: Registry,
  ref: Reference,
  d: Descriptor,
  offset: number,
  length: number,
  options: BlobOptions,
): Promise<{ partial: boolean; bytes: Uint8Array }> {
  const where = formatReference(ref);
  const end = Math.min(offset + length, d.size) - 1;
  if (end < offset) return { partial: true, bytes: new Uint8Array(0) };
  const answer = await registry.send({
    method: 'GET',
    url: `/v2/${ref.repository}/blobs/${d.digest}`,
    repository: ref.repository,
    headers: { range: `bytes=${offset}-${end}` },
    ok: [200, 206],
    limit: Math.max(options.maxSize, end - offset + 1),
    tooLarge: () =>
      new OciError('layer-too-large', `the layer of ${where} is over the ${options.maxSize} bytes allowed (--max-image-size)`, {
        reference: where,
      }),
    doing: `reading the ${d.mediaType} layer of ${where}`,
  });
  if (answer.status === 206) return { partial: true, bytes: answer.body };
  if (answer.body.length > options.maxSize)
    throw new OciError('layer-too-large', `the layer of ${where} is over the ${options.maxSize} bytes allowed`, { reference: where });
  if (sha256(answer.body) !== d.digest) {
    throw new OciError('digest-mismatch', `the ${d.mediaType} layer of ${where} does not have digest ${d.digest}: it changed on the way`, {
      reference: where,
    });
  }
  return { partial: false, bytes: answer.body };
}

export interface PushOptions {
  /** A repository of the same registry that holds the blobs: they are mounted from it rather than sent. */
  mountFrom?: string;
}

export interface PushReport {
  digest: string;
  /** Per blob: sent, already there, or mounted from another repository. */
  blobs: { digest: string; how: 'sent' | 'exists' | 'mounted' }[];
}

/** Pushes `artifact`'s blobs then its manifest under `ref`'s tag (or its digest alone). */
export async function pushArtifact(registry: Registry, ref: Reference, artifact: Artifact, options: PushOptions = {}): Promise<PushReport> {
  const where = formatReference(ref);
  if (ref.digest !== undefined && ref.digest !== artifact.digest) {
    throw new OciError(
      'digest-mismatch',
      `${where} names digest ${ref.digest}, but the artifact pushed has ${artifact.digest}: push to a tag`,
      {
        reference: where,
      },
    );
  }
  const blobs: PushReport['blobs'] = [];
  for (const blob of [artifact.config, ...artifact.layers])
    blobs.push({ digest: blob.descriptor.digest, how: await pushBlob(registry, ref, blob, options) });
  await registry.send({
    method: 'PUT',
    url: `/v2/${ref.repository}/manifests/${ref.tag ?? artifact.digest}`,
    repository: ref.repository,
    push: true,
    headers: { 'content-type': MEDIA.manifest },
    body: artifact.manifestBytes,
    ok: [201],
    doing: `pushing the manifest of ${where}`,
  });
  return { digest: artifact.digest, blobs };
}

async function pushBlob(registry: Registry, ref: Reference, blob: Blob, options: PushOptions): Promise<'sent' | 'exists' | 'mounted'> {
  const { digest, size } = blob.descriptor;
  const where = formatReference(ref);
  const base = { repository: ref.repository, push: true };
  const head = await registry.send({
    ...base,
    method: 'HEAD',
    url: `/v2/${ref.repository}/blobs/${digest}`,
    ok: [200, 404],
    doing: `checking for ${digest} in ${where}`,
  });
  if (head.status === 200) return 'exists';
  const mount =
    options.mountFrom !== undefined && options.mountFrom !== ref.repository
      ? `?mount=${digest}&from=${encodeURIComponent(options.mountFrom)}`
      : '';
  const started = await registry.send({
    ...base,
    method: 'POST',
    url: `/v2/${ref.repository}/blobs/uploads/${mount}`,
    ok: [201, 202],
    doing: `starting the upload of ${digest} to ${where}`,
  });
  if (started.status === 201) return 'mounted';
  let location = uploadLocation(started, where);
  if (size > registry.chunkSize) {
    for (let offset = 0; offset < size; offset += registry.chunkSize) {
      const chunk = blob.bytes.subarray(offset, Math.min(size, offset + registry.chunkSize));
      const answer = await registry.send({
        ...base,
        method: 'PATCH',
        url: location,
        headers: {
          'content-type': 'application/octet-stream',
          'content-range': `${offset}-${offset + chunk.length - 1}`,
          'content-length': String(chunk.length),
        },
        body: chunk,
        ok: [202],
        doing: `uploading ${digest} to ${where} (bytes ${offset} to ${offset + chunk.length - 1})`,
      });
      location = uploadLocation(answer, where);
    }
    await registry.send({
      ...base,
      method: 'PUT',
      url: withDigest(location, digest),
      headers: { 'content-length': '0' },
      ok: [201],
      doing: `closing the upload of ${digest} to ${where}`,
    });
  } else {
    await registry.send({
      ...base,
      method: 'PUT',
      url: withDigest(location, digest),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
      body: blob.bytes,
      ok: [201],
      doing: `uploading ${digest} to ${where}`,
    });
  }
  return 'sent';
}

function uploadLocation(answer: Answer, where: string): string {
  const location = first(answer.headers.location);
  if (location === undefined)
    throw new OciError('registry-error', `the registry of ${where} started an upload without saying where to send it (no Location)`, {
      reference: where,
    });
  return location;
}

function withDigest(location: string, digest: string): string {
  return `${location}${location.includes('?') ? '&' : '?'}digest=${encodeURIComponent(digest)}`;
}
