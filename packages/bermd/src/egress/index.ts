export { FETCH, PROXY, SERVABLE_SYSCALLS, DEFAULT_HTTP_MAX_BODY } from './syscalls.js';
export { HttpEgress, egressContext, type EgressContext, type EgressOptions, type FetchAnswer } from './http.js';
export { parseHostPattern, parseHostPatterns, matchesUrl, covers, firstMatch, type HostPattern } from './hosts.js';
export { parseGuestRequest, secretRefs, SECRET_REF, type GuestRequest } from './request.js';
export { parseResolve, resolvingConnector, ResolveError, type ResolveEntry } from './resolve.js';
