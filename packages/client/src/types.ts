/** The shapes the bermd control API answers with (spec §5). */

import type { Break } from '@berm/manifest';

export type { Break };

/** Something a deploy went through with but the operator should know, e.g. a declared program that is not deployed. */
export interface Notice {
  code: string;
  message: string;
  /** For `program-not-deployed`. */
  program?: string;
  /** For `secret-not-provided`. */
  secret?: string;
}

/** The limits a harness's calls run under: its own where its deploy set them, the daemon's elsewhere. */
export interface HarnessLimits {
  timeout_ms: number;
  max_memory_bytes: number;
  max_result_bytes: number;
}

/** Syscalls with the hosts reached through each, and secret names. */
export interface GrantSet {
  syscalls: Record<string, string[]>;
  secrets: string[];
}

/** What the operator set at deploy; absent members are the defaults. */
export interface HarnessBindings {
  timeout_ms?: number;
  max_memory_bytes?: number;
  max_result_bytes?: number;
  /** Absent: everything declared is granted. */
  grants?: GrantSet;
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
  /** The limits its calls run under. */
  limits: HarnessLimits;
  /** What it is granted (secret names only, never values). */
  grants: GrantSet;
  /** What its deploy set; `{}` when the defaults apply. */
  bindings: HarnessBindings;
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
  /** True when an existing harness was replaced (HTTP 200), false when it is new (201); for a dry run, what a deploy would do. */
  replaced: boolean;
  /** Set by a dry run: every check and the gate passed, and nothing was stored or served. */
  dry_run?: true;
  /** A dry run's answer carries the manifest the daemon read from the image. */
  manifest?: HarnessDetail['manifest'];
}

/** The body of every error the daemon answers with. */
export interface ErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}
