/** The control API's answers as the page reads them: the client's types, with the manifest typed as the manifest library has it. */
import type { DeployResult, GatedBreak, HarnessDetail as ClientHarnessDetail } from '@berm/client';
import type { ManifestData } from '@berm/manifest';

export type { GatedBreak, GrantSet, HarnessSummary, Notice } from '@berm/client';
export type { ManifestData, ToolSpec, EventSpec, JsonSchema } from '@berm/manifest';

export type HarnessDetail = Omit<ClientHarnessDetail, 'manifest'> & { manifest: ManifestData };

/** A deploy's answer body (whether it replaced is the status: 200 or 201). */
export type DeployAnswer = Omit<DeployResult, 'replaced' | 'manifest'> & { manifest?: ManifestData };

/** An error answer's `error` member: a stable code, a message, and what the code carries. */
export interface ErrorBody {
  code: string;
  message: string;
  breaks?: GatedBreak[];
  reported?: GatedBreak[];
  window_seconds?: number;
  problems?: { code: string; message: string }[];
  [member: string]: unknown;
}

/** What `GET /events` sends, one per deploy or undeploy. */
export type ChangeMessage = { type: 'deployed'; name: string; replaced: boolean } | { type: 'undeployed'; name: string };
