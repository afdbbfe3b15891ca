export { ANONYMOUS, OPERATOR, OPERATOR_NAME, Principal } from './principal.js';
export {
  AccessFileError,
  newToken,
  parseAccess,
  PRINCIPAL_NAME,
  readAccessFile,
  tokenSha256,
  writeAccessFile,
  type AccessEntry,
} from './access-file.js';
export { StaticPrincipals, type AccessChange } from './static-principals.js';
export {
  Authentication,
  bearerOf,
  type Authenticated,
  type AuthenticationOptions,
  type TokenRefusal,
  type TokenVerifier,
} from './authentication.js';
export { oauthUrlRefusal } from './oauth-url.js';
export { DISCOVERY_TIMEOUT_MS, metadataUrls, discover, type AuthorizationServerMetadata } from './discovery.js';
export { CLOCK_SKEW_SECONDS, JWT_ALGORITHMS, JwtVerifier, looksLikeJwt, type JwtVerifierOptions } from './jwt-verifier.js';
export { Introspection, type IntrospectionClient, type IntrospectionOptions } from './introspection.js';
export { TOKEN_CACHE_SIZE, TokenCache } from './token-cache.js';
export { principalOfClaims } from './claims.js';
export { DISCOVERY_RETRY, ResourceServer, type ResourceServerOptions } from './resource-server.js';
export {
  PROTECTED_RESOURCE_WELL_KNOWN,
  resourceMetadata,
  resourceMetadataPaths,
  resourceMetadataUrl,
  type ProtectedResourceMetadata,
} from './resource-metadata.js';
export { protectedResourcePlugin, type ProtectedResourceOptions } from './metadata-plugin.js';
