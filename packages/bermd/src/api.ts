/** The shapes of the control API's answers (spec §5). */
import type { Break, ManifestData } from '@berm/manifest';

export interface Notice {
  code: 'program-not-deployed';
  message: string;
  program: string;
}

export interface HarnessSummary {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  deployed_at: string;
  last_used_at: string | null;
}

export interface HarnessDetail extends HarnessSummary {
  manifest: ManifestData;
}

export interface DeployResult {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  /** Breaks the deploy was allowed through with; empty until the compatibility gate compares with the previous image. */
  reported: Break[];
  notices: Notice[];
  /** Whether an existing harness was replaced (the HTTP layer answers 200 rather than 201). */
  replaced: boolean;
}
