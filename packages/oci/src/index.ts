export { OciError, isOciError, OCI_ERROR_CODES, escapeText, type OciErrorCode } from './errors.js';
export {
  parseReference,
  looksLikeBareReference,
  formatReference,
  isDigest,
  isLoopbackHost,
  SCHEME,
  type Reference,
} from './reference.js';
export {
  MEDIA,
  ANNOTATION,
  WASM_LAYER_TYPES,
  buildArtifact,
  sha256,
  type Artifact,
  type ArtifactInput,
  type Descriptor,
  type ImageManifest,
} from './layout.js';
export { Registry, parseChallenge, DEFAULT_CHUNK, type RegistryOptions } from './registry.js';
export {
  resolve,
  fetchBlob,
  fetchRange,
  pushArtifact,
  type Resolved,
  type PushReport,
  type PushOptions,
  type BlobOptions,
} from './artifacts.js';
export { credentialFor, storeCredential, eraseCredential, dockerConfigPath, AUTH_ENV, type Credential } from './credentials.js';
