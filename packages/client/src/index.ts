export { BermClient, DEFAULT_URL, daemonUrl, type BermClientOptions, type DeployOptions } from './client.js';
export {
  BermClientError,
  DaemonUnreachableError,
  isBermClientError,
  isUnreachable,
  CLIENT_ERROR_CODES,
  type ClientErrorCode,
} from './errors.js';
export type {
  Break,
  GatedBreak,
  Notice,
  HarnessLimits,
  GrantSet,
  HarnessBindings,
  HarnessSummary,
  HarnessDetail,
  HarnessUsage,
  DeployResult,
  DeployAnswer,
  ErrorBody,
  BreaksCallersError,
  HarnessChange,
  WhoAmI,
} from './types.js';
