export { ERROR_STATUS, ApiError, isErrorCode, type ErrorCode, type ErrorBody } from './errors.js';
export type {
  DeploySource,
  Break,
  Notice,
  Limits,
  LimitName,
  LimitBindings,
  GrantSet,
  Bindings,
  HarnessSummary,
  HarnessUsage,
  HarnessDetail,
  GatedBreak,
  DeployAnswer,
  DeployResult,
  BreaksCallersError,
  HarnessChange,
  WhoAmI,
  HistoryAction,
  HistoryImage,
  HistoryEntry,
  HistoryPage,
  RetainedImage,
  RetainedImages,
  RollbackRequest,
  UndeployedHarness,
} from './api.js';
export { HARNESS_NAME, isHarnessName, badHarnessNameMessage } from './names.js';
export {
  parseDuration,
  parseSize,
  formatDuration,
  describeDuration,
  formatSize,
  readDurationLimit,
  readSizeLimit,
  readCountLimit,
  MIN_MEMORY_BYTES,
  DURATION_UNITS,
  SIZE_UNITS,
  SECOND_MS,
  MINUTE_MS,
  HOUR_MS,
  DAY_MS,
  WEEK_MS,
  type DurationUnit,
} from './units.js';
export {
  encodeDeployQuery,
  decodeDeployQuery,
  DEPLOY_PARAMS,
  DEPLOY_QUERY_SCHEMA,
  unknownParameterMessage,
  repeatedParameterMessage,
  type DeployOptions,
  type DeployLimitOptions,
  type DeployRequest,
  type ParsedQuery,
} from './deploy-query.js';
export { HOST_CALL, ABI_HOST_CALLS, SYSCALL, HTTP_SYSCALLS, ASK_SYSCALLS, ALLOC_EXPORT, TOOL_EXPORT_PREFIX, toolExport } from './abi.js';
export {
  SETTINGS,
  HARNESS_SETTINGS,
  settingByFlag,
  describeSize,
  type Setting,
  type Settings,
  type SettingRow,
  type SettingKind,
  type MachineDefault,
  type HarnessSettingRow,
  type LimitCode,
} from './settings.js';
export { readSettingText, printDefault, type SettingValue } from './setting-values.js';
export { settingsTable, SETTINGS_TABLE_START, SETTINGS_TABLE_END } from './settings-table.js';
export { backoff, type Backoff } from './backoff.js';
export { SCOPE, SCOPES, Principal, callScope, harnessOfCallScope, isBermScope } from './scopes.js';
export {
  CALL_ERROR_CODES,
  TOOL_ERROR_CODES,
  isCallRefusal,
  type CallErrorCode,
  type ToolEvent,
  type ToolLog,
  type ToolContent,
  type ToolAnswerDocument,
} from './tool-answer.js';
export {
  CALL_ERROR_KINDS,
  FIGURES_HOUR_POINTS,
  type CallErrorKind,
  type FigureWindow,
  type HourSeries,
  type ToolFigures,
  type HarnessFigures,
  type FiguresSummary,
  type FiguresChange,
} from './figures.js';
