export {
  HttpEgress,
  egressContext,
  SERVABLE_SYSCALLS,
  DEFAULT_HTTP_MAX_BODY,
  type EgressContext,
  type EgressOptions,
  type FetchAnswer,
} from './http.js';
export { parseHostPattern, parseHostPatterns, matchesUrl, covers, firstMatch, grantedPatterns, type HostPattern } from './hosts.js';
export { parseGuestRequest, secretRefs, SECRET_REF, type GuestRequest } from './request.js';
export { parseResolve, resolvingConnector, ResolveError, type ResolveEntry } from './resolve.js';
export { Secrets, SecretsFileError, SECRET_NAME, type SecretUnavailable, type SecretsChange } from './secrets.js';
