/** The shapes of the control API's requests and answers (spec §5), as bermd writes them and the client reads them. */
import type { Break, ManifestData } from '@berm/manifest';
import type { LimitName } from './settings.js';

export type { LimitName };

export type { Break };

/** Something a deploy went through with but the operator should know. */
export type Notice =
  /** A program in `deps.programs` that is not deployed: calls to it are refused until it is. */
  | { code: 'program-not-deployed'; message: string; program: string }
  /** A secret the harness is granted that the operator provides to no call entering through it (a call through another harness may still have it). */
  | { code: 'secret-not-provided'; message: string; secret: string };

/** The limits a harness's calls run under, and the daemon's own (the defaults and the upper bounds of every harness's). */
/**
 * A harness's limits, by their settings' wire names (settings.ts): a call's wall-clock limit in ms
 * (nested calls included), the memory cap compiled into its memories and the longest result (and
 * host-call request) read from its instances in bytes, and how many calls entering through it may run
 * at once (the others wait their turn).
 */
export type Limits = { [Name in LimitName]: number };

/** Limits a deploy sets; absent members are the daemon's. */
export type LimitBindings = Partial<Limits>;

/** Syscalls with the hosts reached through each, and secret names (never values). */
export interface GrantSet {
  syscalls: Record<string, string[]>;
  secrets: string[];
}

/** What the operator set at deploy, as stored with the harness and shown by the API; absent members are the defaults. */
export interface Bindings extends LimitBindings {
  /** Absent: everything declared is granted. */
  grants?: GrantSet;
}

/**
 * Where a deployed image came from when it was deployed from a registry: the reference as the deploy gave
 * it (`oci://HOST/REPO:TAG`, or pinned `@sha256:…`) and the digest of the OCI manifest it resolved to.
 */
export interface DeploySource {
  reference: string;
  /** `sha256:<hex>` of the OCI manifest (not of the image, which is the harness's `digest`). */
  digest: string;
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
  /**
   * The name of the principal whose deploy this is (`anonymous` where bermd asks for no token); null when
   * unknown: deployed before bermd recorded it, or its stored record was derived again from the image.
   */
  deployed_by: string | null;
  /** ISO 8601; null until a tool of the harness has run. */
  last_used_at: string | null;
  /** The limits its calls run under: its bindings' where set, the daemon's elsewhere. */
  limits: Limits;
  /** What it is granted: syscalls with the hosts reached through them, and secrets (names only). */
  grants: GrantSet;
  /** What the operator set at deploy; `{}` when nothing was, and the defaults apply. */
  bindings: Bindings;
  /** The registry reference and manifest digest the image was deployed from; absent when it was sent as a file. */
  source?: DeploySource;
}

/** Per tool and event of the manifest, its last use (ISO 8601), null when never. */
export interface HarnessUsage {
  tools: Record<string, string | null>;
  events: Record<string, string | null>;
}

export interface HarnessDetail extends HarnessSummary {
  /** The merged manifest the image carries. */
  manifest: ManifestData;
  usage: HarnessUsage;
}

/** A break as a deploy answers it: with the last use of the tool or event it concerns. */
export interface GatedBreak extends Break {
  /** ISO 8601, null if never used. */
  last_used_at: string | null;
  /** Used within the daemon's window: such a break refuses a deploy that is not forced. */
  used: boolean;
}

/** The body of a deploy's 200 (replaced) or 201 (new) answer. */
export interface DeployAnswer {
  name: string;
  digest: string;
  version: string;
  tools: string[];
  events: string[];
  /** Breaks of the replaced harness the deploy went through with, each with its last use; `used` marks those it was forced past. */
  reported: GatedBreak[];
  notices: Notice[];
  /** Set by a dry run (`?dry-run=true`): every check and the gate passed, and nothing was stored, served or announced. */
  dry_run?: true;
  /** A dry run's answer carries the manifest the daemon read from the image, so a client can show what it declares. */
  manifest?: ManifestData;
  /** The history entry the deploy or rollback made; absent on a dry run, which makes none. */
  entry?: HistoryEntry;
}

/** A deploy's answer with what its status says. */
export interface DeployResult extends DeployAnswer {
  /** True when an existing harness was replaced (HTTP 200), false when it is new (201); for a dry run, what the deploy would do. */
  replaced: boolean;
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

/** What a change did. A `rollback` is a deploy of an image the harness had before (or of the one it served before its undeploy). */
export type HistoryAction = 'deploy' | 'undeploy' | 'rollback';

/** One image of a harness, as history names it. `version` is its manifest's; null when the manifest did not read. */
export interface HistoryImage {
  digest: string;
  version: string | null;
}

/** One answered change of a harness (`GET /harnesses/{name}/history`). */
export interface HistoryEntry {
  action: HistoryAction;
  /** When the change was made (ISO 8601). */
  at: string;
  /** The principal that made it (`anonymous` when bermd asks for no token); null when unknown. */
  principal: string | null;
  /** The bermd process it went through (`host/pid` unless `--replica-name` says otherwise). */
  replica: string;
  /** What the name served before; null when nothing. */
  from: HistoryImage | null;
  /** What it serves after; null after an undeploy. */
  to: HistoryImage | null;
  /** Whether the change was forced (`force`), whether or not anything refused it. */
  forced: boolean;
  /** The breaks that would have refused it, which `force` went past. */
  forced_past: GatedBreak[];
  /** Every break the gate reported, refusing or not. */
  reported: GatedBreak[];
  notices: Notice[];
  /** The registry reference and manifest digest a deploy's image came from; absent otherwise. */
  source?: DeploySource;
}

/** A page of a harness's history, newest first; `next_cursor` (as `?cursor=`) reads the next older page, null when there is none. */
export interface HistoryPage {
  entries: HistoryEntry[];
  next_cursor: string | null;
}

/** An image the store keeps for a harness besides the one it serves, so that a rollback needs nothing from the operator's disk. */
export interface RetainedImage extends HistoryImage {
  /** When it stopped being served (ISO 8601). */
  retained_at: string;
  /** The operator's bindings it was deployed with, which a rollback to it restores; `{}` for the defaults. */
  bindings: Bindings;
  /** The registry reference and manifest digest it was deployed from, which a rollback to it records again; absent when none was given. */
  source?: DeploySource;
}

/** `GET /harnesses/{name}/images`: what a rollback can go back to, newest first (`steps: 1` is the first). */
export interface RetainedImages {
  name: string;
  /** What the name serves now; null when it is undeployed. */
  current: HistoryImage | null;
  retained: RetainedImage[];
}

/** `POST /harnesses/{name}/rollback`'s body: a retained image by digest, or how many images back; `{}` means `{"steps": 1}`. */
export interface RollbackRequest {
  to?: string;
  steps?: number;
}

/** `GET /undeployed`: a name undeployed within the history's retention, whose undeploy a rollback can undo. */
export interface UndeployedHarness {
  name: string;
  undeployed_at: string;
  /** Who undeployed it; null when unknown. */
  undeployed_by: string | null;
  /** The image it served until then, which `rollback` redeploys; null when the store no longer keeps it. */
  last: HistoryImage | null;
}

/** One receipt of an external write (`GET /harnesses/{name}/receipts`): a call of an `external_write` tool and how it ended. */
export interface ReceiptView {
  /** The principal that called; empty for a call of bermd's own. */
  principal: string;
  tool: string;
  /** The call's idempotency key: the client's, or one bermd made (`generated`). */
  key: string;
  generated: boolean;
  /** The hex SHA-256 of its arguments as canonical JSON. */
  args_sha256: string;
  /** `started` while it runs (or when it was abandoned), `completed` once it answered. */
  state: 'started' | 'completed';
  /** `ok`, `tool-error`, or `failed` (the host stopped it); null while started. */
  outcome: 'ok' | 'tool-error' | 'failed' | null;
  /** The error's code for `tool-error` and `failed`; else null. */
  code: string | null;
  started_at: string;
  completed_at: string | null;
  /** The replica that ran it (`--replica-name`). */
  replica: string;
  /** Whether the answer was kept (false when it was over the harness's result limit). */
  answer_kept: boolean;
  /** The answer as first given (an MCP tool result); only when asked for (`bodies=true`), null when none was kept. */
  answer?: unknown;
}

/** `GET /harnesses/{name}/receipts`: the name's receipts kept within `--receipt-retention`, newest first. */
export interface ReceiptsPage {
  name: string;
  receipts: ReceiptView[];
}

/** `GET /whoami`: the principal the request's token names, and the scopes it holds (`SCOPES`' order, then `berm:call:NAME` sorted). */
export interface WhoAmI {
  name: string;
  scopes: string[];
}

/**
 * One change of the deployed set, as `GET /events` sends it: the `data` of an event named by its
 * `type`. A deploy (new or replacing) or an undeploy, made by anyone; a dry run is none.
 */
export type HarnessChange = { type: 'deployed'; name: string; replaced: boolean } | { type: 'undeployed'; name: string };
