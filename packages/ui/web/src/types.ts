/** The control API's answers as the page reads them: the wire contract's shapes (`@berm/protocol`), as the client has them. */
import type { BreaksCallersError, ErrorBody } from '@berm/protocol';

export type {
  CallErrorKind,
  DeployOptions,
  FiguresChange,
  FiguresSummary,
  FigureWindow,
  HarnessFigures,
  HourSeries,
  ToolFigures,
  DeployResult,
  GatedBreak,
  GrantSet,
  HarnessChange,
  HarnessDetail,
  HarnessSummary,
  HistoryAction,
  HistoryEntry,
  HistoryImage,
  HistoryPage,
  Notice,
  RetainedImage,
  RetainedImages,
  RollbackRequest,
  UndeployedHarness,
  WhoAmI,
} from '@berm/protocol';
export type { ManifestData, ToolSpec, EventSpec, JsonSchema } from '@berm/manifest';

/** An error answer's `error` member: a stable code, a message, and what the code carries (the gate's breaks, the checks' problems). */
export type ErrorObject = ErrorBody['error'] &
  Partial<Pick<BreaksCallersError, 'breaks' | 'reported' | 'window_seconds'>> & {
    problems?: { code: string; message: string }[];
  };
