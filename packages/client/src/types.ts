/** The shapes the bermd control API answers with (spec §5): the wire contract's, as `@berm/protocol` defines them. */
export type {
  Break,
  Notice,
  Limits as HarnessLimits,
  GrantSet,
  Bindings as HarnessBindings,
  HarnessSummary,
  HarnessDetail,
  HarnessUsage,
  GatedBreak,
  DeployResult,
  DeployAnswer,
  ErrorBody,
  BreaksCallersError,
  HarnessChange,
  WhoAmI,
} from '@berm/protocol';
