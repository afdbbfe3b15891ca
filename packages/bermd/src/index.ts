export { main } from './main.js';
export { Registry, type Harness, type Use, type DeployHooks, type CheckedHarness, type RegistryOptions, type DeployOptions, type SkippedHarness, type ChangeEvent } from './registry.js';
export { buildHttpApp, type HttpOptions } from './http.js';
export { Store, type HarnessMeta, type StoredHarness, type UsageRecord } from './store.js';
export { checkImage, abiProblems, digestOf, ABI_HOST_CALLS, type CheckPolicy, type CheckedImage, type Problem } from './checks.js';
export { readSignatures, type FuncType, type ValType, type ImportEntry, type ExportEntry } from './wasm-signatures.js';
export { BermdError, isBermdError, ERROR_STATUS, type BermdErrorCode } from './errors.js';
export { HARNESS_NAME, isHarnessName, assertHarnessName } from './names.js';
export { parseOptions, parseListen, parseSize, parseDuration, defaultStateDir, OptionsError, DEFAULT_PORT, DEFAULT_HOST, DEFAULT_MAX_IMAGE_SIZE, type DaemonOptions } from './options.js';
export type { DeployResult, HarnessSummary, HarnessDetail, Notice } from './api.js';
export { gateBreaks, usedWithin, breaksCallersError, usageOf, parseWindow, describeWindow, DEFAULT_BREAKS_WINDOW_MS, type GatedBreak, type GateResult, type HarnessUsage } from './compat.js';
export { createDaemon, type Daemon, type DaemonConfig } from './daemon.js';
export * from './mcp/index.js';
export {
  parseBindingQuery,
  parseGrant,
  grantsFromSpecs,
  declaredGrants,
  effectiveGrants,
  effectiveLimits,
  checkLimits,
  HTTP_SYSCALLS,
  BINDING_PARAMS,
  type Bindings,
  type BindingRequest,
  type GrantSet,
  type GrantSpec,
  type EffectiveLimits,
  type DaemonBounds,
  type LimitBindings,
} from './bindings.js';
export { Secrets, SecretsFileError, redactingStream, SECRET_NAME, type SecretUnavailable } from './secrets.js';
export * from './egress/index.js';
