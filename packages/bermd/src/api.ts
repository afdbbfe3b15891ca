/** The shapes of the control API's answers (spec §5). */
import type { ManifestData } from '@berm/manifest';
import type { GatedBreak, HarnessUsage } from './compat.js';

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
  /** Per tool and event of the manifest, its last use (null when never). */
  usage: HarnessUsage;
}

export interface DeployResult {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  /** Breaks of the replaced harness the deploy went through with, each with its last use; `used` marks those it was forced past. */
  reported: GatedBreak[];
  notices: Notice[];
  /** Whether an existing harness was replaced (the HTTP layer answers 200 rather than 201). */
  replaced: boolean;
}
