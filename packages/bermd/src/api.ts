/** The shapes of the control API's answers (spec §5). */
import type { ManifestData } from '@berm/manifest';
import type { Bindings, EffectiveLimits, GrantSet } from './bindings.js';
import type { GatedBreak, HarnessUsage } from './compat.js';

export type Notice =
  | { code: 'program-not-deployed'; message: string; program: string }
  /** A secret the harness is granted that the operator provides to no call entering through it (a call through another harness may still have it). */
  | { code: 'secret-not-provided'; message: string; secret: string };

export interface HarnessSummary {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  deployed_at: string;
  last_used_at: string | null;
  /** The limits its calls run under: its bindings' where set, the daemon's elsewhere. */
  limits: EffectiveLimits;
  /** What it is granted: syscalls with the hosts reached through them, and secrets (names only). */
  grants: GrantSet;
  /** What the operator set at deploy; `{}` when nothing was, and the defaults apply. */
  bindings: Bindings;
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
  /** Set by a dry run: every check and the gate passed, and nothing was stored or served. */
  dry_run?: true;
  /** A dry run's answer carries the manifest it read, so a client can show what the image declares. */
  manifest?: ManifestData;
}
