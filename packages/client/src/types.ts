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
  /** Per tool and event of the manifest, when it was used last (ISO 8601), null if never. */
  usage: HarnessUsage;
}

export interface HarnessUsage {
  tools: Record<string, string | null>;
  events: Record<string, string | null>;
}

/** A break as a deploy answers it: with the last use of the tool or event it concerns. */
export interface GatedBreak extends Break {
  /** ISO 8601, null if never used. */
  last_used_at: string | null;
  /** Used within the daemon's window: such a break refuses a deploy that is not forced. */
  used: boolean;
}

/** The error object of a 409 `breaks-callers`: the image breaks tools or events callers used lately. */
export interface BreaksCallersError {
  code: 'breaks-callers';
  message: string;
  name: string;
  /** The daemon's window (`--breaks-window`), in seconds. */
  window_seconds: number;
  /** The breaks of tools and events used within the window: what refused the deploy. */
  breaks: GatedBreak[];
  /** The other breaks, which alone would only have been reported. */
  reported: GatedBreak[];
}

export interface DeployResult {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  /** The breaks the deploy went through with; those with `used: true` it was forced past. */
  reported: GatedBreak[];
  notices: Notice[];
  /** True when an existing harness was replaced (HTTP 200), false when it is new (201). */
  replaced: boolean;
}

/** The body of every error the daemon answers with. */
export interface ErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}
