/** The control API's answers as the page reads them (docs/contract.md §5, packages/bermd/README.md). */
import type { ManifestData } from '@berm/manifest';

export type { ManifestData, ToolSpec, EventSpec, JsonSchema } from '@berm/manifest';

export interface Limits {
  timeout_ms: number;
  max_memory_bytes: number;
  max_result_bytes: number;
}

export interface GrantSet {
  syscalls: Record<string, string[]>;
  secrets: string[];
}

export interface HarnessSummary {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  deployed_at: string;
  last_used_at: string | null;
  limits: Limits;
  grants: GrantSet;
  bindings: Partial<Limits> & { grants?: GrantSet };
}

export interface HarnessDetail extends HarnessSummary {
  manifest: ManifestData;
  usage: { tools: Record<string, string | null>; events: Record<string, string | null> };
}

export interface GatedBreak {
  code: string;
  tool?: string;
  event?: string;
  path: string;
  message: string;
  last_used_at: string | null;
  used: boolean;
}

export interface Notice {
  code: string;
  message: string;
}

export interface DeployAnswer {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  reported: GatedBreak[];
  notices: Notice[];
  dry_run?: true;
  manifest?: ManifestData;
}

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

export type ChangeMessage = { type: 'deployed'; name: string; replaced: boolean } | { type: 'undeployed'; name: string };
