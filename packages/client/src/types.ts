/** The shapes the bermd control API answers with (spec §5). */

import type { Break } from '@berm/manifest';

export type { Break };

/** Something a deploy went through with but the operator should know, e.g. a declared program that is not deployed. */
export interface Notice {
  code: string;
  message: string;
  program?: string;
}

export interface HarnessSummary {
  name: string;
  /** `sha256:<hex>` of the stored image. */
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  /** ISO 8601. */
  deployed_at: string;
  /** ISO 8601; null until a tool of the harness has run. */
  last_used_at: string | null;
}

export interface HarnessDetail extends HarnessSummary {
  /** The merged manifest the image carries. */
  manifest: Record<string, unknown> & { deps?: { programs?: string[] } };
}

export interface DeployResult {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  reported: Break[];
  notices: Notice[];
  /** True when an existing harness was replaced (HTTP 200), false when it is new (201). */
  replaced: boolean;
}

/** The body of every error the daemon answers with. */
export interface ErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}
