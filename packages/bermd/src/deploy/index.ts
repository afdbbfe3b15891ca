export {
  Registry,
  DEFAULT_RECONCILE_INTERVAL_MS,
  type Harness,
  type Use,
  type DeployHooks,
  type RegistryOptions,
  type DeployOptions,
  type RollbackOptions,
  type UndeployOptions,
  type SkippedHarness,
  type ChangeEvent,
  type RegistryCounters,
  type StoreHealth,
} from './registry.js';
export { grantedAsks } from './bindings.js';
export { admit, type CheckedHarness, type AdmissionPolicy, type AdmissionRequest, type Admitted } from './admission.js';
export { checkImage, abiProblems, digestOf, type CheckPolicy, type CheckedImage, type DeployPhase, type Problem } from './checks.js';
export { readSignatures, type FuncType, type ValType, type ImportEntry, type ExportEntry } from './wasm-signatures.js';
export {
  readDeployQuery,
  parseBindingQuery,
  parseGrant,
  grantsFromSpecs,
  declaredGrants,
  effectiveGrants,
  effectiveLimits,
  checkLimits,
  HTTP_SYSCALLS,
  type Bindings,
  type BindingRequest,
  type GrantSet,
  type GrantSpec,
  type LimitBindings,
} from './bindings.js';
export {
  gateBreaks,
  usedWithin,
  breaksCallersError,
  usageOf,
  parseWindow,
  describeWindow,
  emptyUsage,
  DEFAULT_BREAKS_WINDOW_MS,
  type GatedBreak,
  type GateResult,
  type HarnessUsage,
  type UsageRecord,
} from './gate.js';
export type { HarnessStore, HarnessMeta, StoredHarness, StoredHead, RetentionPolicy } from './store.js';
export { retentionPolicy, DEFAULT_KEEP_IMAGES, DEFAULT_HISTORY_RETENTION_MS } from './retention.js';
export {
  decodeEntry,
  HISTORY_PAGE,
  MAX_HISTORY_ENTRIES,
  MAX_HISTORY_PAGE,
  type HistoryAction,
  type HistoryEntry,
  type HistoryImage,
  type HistoryPage,
  type HistoryQuery,
  type RetainedImage,
  type UndeployedName,
} from './history.js';
export { DirectoryStore } from './directory-store.js';
export { decodeBindings, decodeDeployedBy, decodeMeta, decodeUseTime, USE_CLOCK_SKEW_MS } from './store-codec.js';
export { PostgresStore, DEFAULT_STORE_TIMEOUT_MS, MAX_STORE_TIMEOUT_MS } from './postgres-store.js';
export { LISTEN_APPLICATION_NAME } from './postgres-listener.js';
export { reasonOf } from './postgres-errors.js';
export { isPostgresUrl, storeLocation, storePasswords } from './postgres-url.js';
export { SCHEMA_VERSION, LOCK_CLASS } from './postgres-schema.js';
export { moveStore, type MovedHarness } from './move-store.js';
export {
  argumentsHash,
  canonicalJson,
  idOf,
  receiptView,
  MAX_RECEIPTS_PAGE,
  RECEIPTS_PAGE,
  DEFAULT_RECEIPT_RETENTION_MS,
  type Receipt,
  type ReceiptId,
  type ReceiptOutcome,
  type ReceiptQuery,
  type ReceiptStore,
} from './receipts.js';
export { DirectoryReceipts } from './directory-receipts.js';
export type { SessionInit, SessionRecord, SessionRecords, SessionWatcher, StoredSession } from './session-records.js';
