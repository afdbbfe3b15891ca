/**
 * The artifact layout: the CNCF wasm OCI layout that wasm-pkg-tools (`wkg oci push`) and runwasi read, an
 * OCI image manifest whose config is `application/vnd.wasm.config.v0+json` and whose first layer is the
 * module (`application/wasm`), plus berm's own second layer, the merged berm manifest as JSON, so that
 * what an image declares is read without downloading the image.
 */
import { createHash } from 'node:crypto';
import { OciError } from './errors.js';

export const MEDIA = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  index: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  wasmConfig: 'application/vnd.wasm.config.v0+json',
  wasm: 'application/wasm',
  bermManifest: 'application/vnd.berm.manifest.v1+json',
} as const;

/** The layer types read as the module: the standard one, and those earlier wasm tooling (wasm-to-oci, runwasi's first layout) pushed. */
export const WASM_LAYER_TYPES: readonly string[] = [
  MEDIA.wasm,
  'application/vnd.wasm.content.layer.v1+wasm',
  'application/vnd.module.wasm.content.layer.v1+wasm',
];

/** The manifest types asked for, in the Accept of every manifest request. */
export const MANIFEST_ACCEPT = [MEDIA.manifest, MEDIA.index, MEDIA.dockerManifest, MEDIA.dockerList].join(', ');

export const ANNOTATION = {
  version: 'org.opencontainers.image.version',
  source: 'org.opencontainers.image.source',
  created: 'org.opencontainers.image.created',
  tools: 'io.berm.tools',
} as const;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture?: string; os?: string };
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType: string;
  manifests: Descriptor[];
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export function descriptor(mediaType: string, bytes: Uint8Array): Descriptor {
  return { mediaType, digest: sha256(bytes), size: bytes.length };
}

/** A blob to push beside the manifest that names it. */
export interface Blob {
  descriptor: Descriptor;
  bytes: Uint8Array;
}

export interface ArtifactInput {
  /** The module's bytes. */
  image: Uint8Array;
  /** The merged berm manifest as JSON text, when the image carries one. */
  manifestJson?: string;
  version?: string;
  tools?: readonly string[];
  /** Where the source lives (a repository URL), for `org.opencontainers.image.source`. */
  source?: string;
  /** ISO 8601; the config's `created` and the annotation. */
  created: string;
}

export interface Artifact {
  manifest: ImageManifest;
  /** The manifest as sent: its digest is the artifact's. */
  manifestBytes: Uint8Array;
  digest: string;
  config: Blob;
  layers: Blob[];
}

/** The artifact for an image: config, the module's layer, berm's manifest layer, and the annotations. */
export function buildArtifact(input: ArtifactInput): Artifact {
  const encoder = new TextEncoder();
  const wasm: Blob = { descriptor: descriptor(MEDIA.wasm, input.image), bytes: input.image };
  const layers = [wasm];
  if (input.manifestJson !== undefined) {
    const bytes = encoder.encode(input.manifestJson);
    layers.push({ descriptor: descriptor(MEDIA.bermManifest, bytes), bytes });
  }
  // layerDigests lists the module's layer alone: it is what wasm tooling runs; berm's layer is metadata.
  const configBytes = encoder.encode(
    JSON.stringify({ created: input.created, architecture: 'wasm', os: 'wasip1', layerDigests: [wasm.descriptor.digest] }),
  );
  const config: Blob = { descriptor: descriptor(MEDIA.wasmConfig, configBytes), bytes: configBytes };
  const annotations: Record<string, string> = { [ANNOTATION.created]: input.created };
  if (input.version !== undefined) annotations[ANNOTATION.version] = input.version;
  if (input.source !== undefined) annotations[ANNOTATION.source] = input.source;
  if (input.tools !== undefined) annotations[ANNOTATION.tools] = input.tools.join(',');
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: config.descriptor,
    layers: layers.map((l) => l.descriptor),
    annotations,
  };
  const manifestBytes = encoder.encode(JSON.stringify(manifest));
  return { manifest, manifestBytes, digest: sha256(manifestBytes), config, layers };
}

/** The layers of a pulled manifest that berm reads: the module's, and berm's manifest when pushed with one. */
export interface ArtifactLayers {
  wasm: Descriptor;
  bermManifest?: Descriptor;
}

/**
 * Reads a manifest's body as an image manifest; an index is told apart by the caller. Refuses
 * `unknown-media-type` for a manifest of another kind, or one with no module layer.
 */
export function readImageManifest(body: Uint8Array, mediaType: string | undefined, where: string): ImageManifest {
  const value = parseJson(body, where) as Partial<ImageManifest>;
  const type = value.mediaType ?? mediaType;
  if (type !== MEDIA.manifest && type !== MEDIA.dockerManifest) {
    throw new OciError(
      'unknown-media-type',
      `${where} is a ${JSON.stringify(type ?? 'manifest without a media type')}, not an image manifest: berm reads ${MEDIA.manifest} (or ${MEDIA.dockerManifest}) with a wasm layer, and an index of them; it is not a wasm artifact`,
      { reference: where, mediaType: type },
    );
  }
  if (!Array.isArray(value.layers) || typeof value.config !== 'object' || value.config === null) {
    throw new OciError('unknown-media-type', `${where} is not an image manifest: it lacks its config or layers`, { reference: where });
  }
  for (const layer of value.layers) checkDescriptor(layer, where);
  return value as ImageManifest;
}

/** The module's layer and berm's, in `manifest`; `unknown-media-type` when no layer is a module. */
export function artifactLayers(manifest: ImageManifest, where: string): ArtifactLayers {
  const wasm = manifest.layers.find((l) => WASM_LAYER_TYPES.includes(l.mediaType));
  if (wasm === undefined) {
    const types = manifest.layers.map((l) => l.mediaType).join(', ') || 'none';
    throw new OciError(
      'unknown-media-type',
      `${where} has no wasm layer: its layers are ${types}, and berm reads a module from a layer of ${WASM_LAYER_TYPES.join(', ')}; push a wasm module (crab push) or name another artifact`,
      { reference: where, layers: manifest.layers.map((l) => l.mediaType) },
    );
  }
  const bermManifest = manifest.layers.find((l) => l.mediaType === MEDIA.bermManifest);
  return bermManifest === undefined ? { wasm } : { wasm, bermManifest };
}

/** The entry of an index a wasm runtime would pick: architecture `wasm` (wasip1 preferred), else `unknown-media-type`. */
export function pickFromIndex(body: Uint8Array, where: string): Descriptor {
  const index = parseJson(body, where) as Partial<ImageIndex>;
  const entries = Array.isArray(index.manifests) ? index.manifests : [];
  const wasm = entries.filter((m) => m?.platform?.architecture === 'wasm');
  const picked = wasm.find((m) => m.platform?.os === 'wasip1') ?? wasm[0];
  if (picked === undefined) {
    const platforms = entries.map((m) => `${m?.platform?.os ?? '?'}/${m?.platform?.architecture ?? '?'}`);
    throw new OciError(
      'unknown-media-type',
      `${where} is an index (${MEDIA.index}) with no wasm entry (its platforms: ${platforms.join(', ') || 'none'}): berm reads an entry for wasm (wasip1 first) whose layer is a module (${MEDIA.wasm}); push one with crab push or name another artifact`,
      { reference: where, mediaType: MEDIA.index, platforms },
    );
  }
  checkDescriptor(picked, where);
  return picked;
}

function checkDescriptor(d: unknown, where: string): void {
  const v = d as Partial<Descriptor> | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.mediaType !== 'string' ||
    typeof v.digest !== 'string' ||
    !/^sha256:[0-9a-f]{64}$/.test(v.digest) ||
    !Number.isSafeInteger(v.size) ||
    (v.size as number) < 0
  ) {
    throw new OciError(
      'unknown-media-type',
      `${where} has a descriptor berm cannot read (a sha256 digest, a size and a media type are needed)`,
      {
        reference: where,
      },
    );
  }
}

function parseJson(body: Uint8Array, where: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new OciError('unknown-media-type', `${where} answered a manifest that is not JSON`, { reference: where });
  }
}
