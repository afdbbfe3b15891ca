export { buildApp, needs, refuseScope, type AppOptions } from './app.js';
export { apiErrorOf, replyWithError } from './errors.js';
export { drainRejectedBody } from './body.js';
export { HostPolicy, hostName, isLoopbackAddress, isLoopbackName, readAllowedHost, type HostPolicyOptions } from './hosts.js';
export { keepAlive, KEEP_ALIVE_COMMENT, SSE_KEEP_ALIVE_MS } from './keep-alive.js';
