export { BermClient, DEFAULT_URL, type BermClientOptions, type DeployOptions } from './client.js';
export { BermClientError, DaemonUnreachableError, isBermClientError, isUnreachable } from './errors.js';
export type { Break, Notice, HarnessSummary, HarnessDetail, DeployResult, ErrorBody } from './types.js';
