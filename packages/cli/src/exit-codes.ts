/**
 * The one place where a failure's stable code becomes the process exit status (spec §7).
 * The table lists every code the command line can meet, the daemon's (`@berm/protocol`), a tool
 * call's (`crab run`, `berm call`), the client's, the manifest reader's, the guest build's and its own, and the compiler holds it to that:
 * a code added to any of them and not here fails the build. A code the table cannot know (from a newer daemon) falls back
 * on the HTTP status the daemon answered with, then on `GENERIC_FAILURE`.
 */
import type { ClientErrorCode } from '@berm/client';
import type { GuestErrorCode } from '@berm/guest/build';
import type { ManifestErrorCode } from '@berm/manifest';
import type { OciErrorCode } from '@berm/oci';
import type { CallErrorCode, ErrorCode } from '@berm/protocol';

/** The codes the command line raises itself (`CliError`). */
export const CLI_ERROR_CODES = [
  'breaks-found',
  'file-not-found',
  'is-a-directory',
  'file-unreadable',
  'not-image-or-manifest',
  'usage',
  'harness-not-found',
  'dir-not-empty',
  'internal',
  // crab run's --secrets file, read as bermd reads its own.
  'bad-secrets-file',
  // berm login and the logins it stores.
  'no-authorization-server',
  'authorization-server-unreachable',
  'authorization-failed',
  'client-id-needed',
  'login-expired',
  'login-store-unreadable',
  // crab deploy --require-digest given a tag.
  'digest-required',
  // crab dev's own bermd did not start, or stopped while it ran.
  'embedded-daemon-failed',
] as const;

export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

/** Every code a failure of the command line can carry. */
export type Code = ErrorCode | CallErrorCode | ClientErrorCode | ManifestErrorCode | GuestErrorCode | OciErrorCode | CliErrorCode;

export const EXIT = {
  ok: 0,
  /** The command's own negative answer: breaks found, deploy refused. */
  negative: 1,
  /** Bad input or usage. */
  badInput: 2,
  /** The daemon could not be reached. */
  unreachable: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES = {
  // The command answered, and the answer is no.
  'breaks-found': EXIT.negative,
  'breaks-callers': EXIT.negative,

  // Bad input: what the manifest reader rejects...
  'not-an-image': EXIT.badInput,
  'component-not-supported': EXIT.badInput,
  'truncated': EXIT.badInput,
  'no-manifest': EXIT.badInput,
  'bad-record': EXIT.badInput,
  'invalid-manifest': EXIT.badInput,
  'bad-module': EXIT.badInput,
  'effect-unknown-tool': EXIT.badInput,
  'effect-reconcile-not-query': EXIT.badInput,
  'effect-reconcile-missing': EXIT.badInput,
  'effect-reconcile-arguments': EXIT.badInput,
  'effect-on-query': EXIT.badInput,
  'resource-path-invalid': EXIT.badInput,
  'resource-template-invalid': EXIT.badInput,
  'resource-path-reserved': EXIT.badInput,
  // ...what the command line itself rejects before reading anything.
  'file-not-found': EXIT.badInput,
  'is-a-directory': EXIT.badInput,
  'file-unreadable': EXIT.badInput,
  'not-image-or-manifest': EXIT.badInput,
  'usage': EXIT.badInput,
  // ...what `crab new` and `crab build` reject: the project, its code (compile errors), its toolchain.
  'dir-not-empty': EXIT.badInput,
  'no-entry': EXIT.badInput,
  'build-error': EXIT.badInput,
  'toolchain-incomplete': EXIT.badInput,
  'bad-secrets-file': EXIT.badInput,
  'bad-package-name': EXIT.badInput,

  // The daemon could not be reached, or what answered at its address is not bermd.
  'daemon-unreachable': EXIT.unreachable,
  'embedded-daemon-failed': EXIT.unreachable,
  'connection-lost': EXIT.unreachable,
  'unexpected-response': EXIT.unreachable,
  'shutting-down': EXIT.unreachable,
  'session-cap': EXIT.unreachable,
  'event-stream-cap': EXIT.unreachable,
  // bermd answered, but the database its deployed set is kept in cannot be reached: try again later.
  'store-unavailable': EXIT.unreachable,
  // bermd answered, but cannot reach the authorization server that vouches for tokens: try again later.
  'auth-unavailable': EXIT.unreachable,
  // bermd refuses the image: deploy's negative answer.
  'not-wasm': EXIT.negative,
  'compile-error': EXIT.negative,
  'abi-version': EXIT.negative,
  'missing-memory': EXIT.negative,
  'missing-alloc': EXIT.negative,
  'missing-export': EXIT.negative,
  'bad-export-signature': EXIT.negative,
  'bad-import-signature': EXIT.negative,
  'undeclared-import': EXIT.negative,
  'unserved-syscall': EXIT.negative,
  'unsupported-module': EXIT.negative,
  'memory-too-large': EXIT.negative,
  'bad-schema': EXIT.negative,
  'tool-name-collision': EXIT.negative,
  // ...or refuses the bindings the deploy asked for against that image.
  'bad-host-pattern': EXIT.negative,
  'grant-not-declared': EXIT.negative,
  'limit-above-daemon': EXIT.negative,
  'effect-undeclared': EXIT.negative,
  'effect-reconcile-returns': EXIT.negative,
  // No harness by that name: undeploy's negative answer.
  'not-found': EXIT.negative,
  // A rollback with nowhere to go: no such retained image, or the one asked for is already served.
  'not-retained': EXIT.negative,
  'already-serving': EXIT.negative,
  // `breaks NAME NEW`: OLD is neither a file nor a harness the daemon holds.
  'harness-not-found': EXIT.badInput,
  // bermd or the client finds the request itself bad.
  'bad-name': EXIT.badInput,
  'bad-image': EXIT.badInput,
  'bad-request': EXIT.badInput,
  'bad-limit': EXIT.badInput,
  'bad-grant': EXIT.badInput,
  'bad-url': EXIT.badInput,
  'image-too-large': EXIT.badInput,
  'unsupported-media-type': EXIT.badInput,
  'unauthorized': EXIT.badInput,
  // The token's principal lacks the scope the request needs.
  'insufficient-scope': EXIT.badInput,
  // A stored login that can no longer be refreshed: berm login again, as for a token refused.
  'login-expired': EXIT.badInput,
  // berm login asked of a bermd with nothing to log in to, or of a server that needs a --client-id: the command was used wrongly.
  'no-authorization-server': EXIT.badInput,
  'client-id-needed': EXIT.badInput,
  // The file berm login keeps its tokens in is not one berm can read.
  'login-store-unreadable': EXIT.badInput,
  // The authorization server cannot be reached: as for the daemon, trying again later may work.
  'authorization-server-unreachable': EXIT.unreachable,
  // The authorization server, or the browser's answer, refused the login: the command's negative answer.
  'authorization-failed': EXIT.negative,
  // The daemon does not answer to the name the address uses (a proxy it was not told of: --allowed-host).
  'forbidden-host': EXIT.badInput,
  'forbidden-origin': EXIT.badInput,

  // Registries (push, pull, and a reference wherever an image path goes): the reference or the artifact
  // is wrong, or the credential is, which the command line must change...
  'bad-reference': EXIT.badInput,
  'digest-required': EXIT.badInput,
  'artifact-not-found': EXIT.badInput,
  'unknown-media-type': EXIT.badInput,
  'layer-too-large': EXIT.badInput,
  'registry-unauthorized': EXIT.badInput,
  'registry-denied': EXIT.badInput,
  'registry-auth-unreadable': EXIT.badInput,
  'credential-helper-failed': EXIT.badInput,
  // ...the bytes are not what their digest says: refused, as a daemon refuses an image...
  'digest-mismatch': EXIT.negative,
  // ...the registry failed otherwise (a 5xx, an answer outside the spec)...
  'registry-error': EXIT.negative,
  // ...or cannot be reached, as for the daemon: trying again later may work.
  'registry-unreachable': EXIT.unreachable,
  // A tool call (crab run, berm call) the tool answered with an error: its negative answer.
  'guest-error': EXIT.negative,
  'trap': EXIT.negative,
  'bad-result': EXIT.negative,
  'bad-content': EXIT.negative,
  // ...or the host refused: a name or arguments that are wrong, as for any bad input...
  'unknown-tool': EXIT.badInput,
  'invalid-arguments': EXIT.badInput,
  // ...a harness that is not there, as undeploy's not-found...
  'unknown-harness': EXIT.negative,
  // ...or stopped it at a limit, or before it ended.
  'timeout': EXIT.negative,
  'memory-limit': EXIT.negative,
  'result-too-large': EXIT.negative,
  'cancelled': EXIT.negative,
  'closed': EXIT.negative,
  // Its harness's line of waiting calls was full: trying again later may work.
  'busy': EXIT.unreachable,
  // A write's receipt answered instead of the tool: a key the caller must change...
  'bad-idempotency-key': EXIT.badInput,
  'idempotency-key-reused': EXIT.badInput,
  // ...the same call still running elsewhere: trying again later may work...
  'in-progress': EXIT.unreachable,
  // ...or a write that may have happened, or whose answer was not kept: refused.
  'outcome-unknown': EXIT.negative,
  'result-not-kept': EXIT.negative,

  // The daemon failed without an answer to give.
  'internal': EXIT.negative,
} as const satisfies Readonly<Record<Code, ExitCode>>;

const TABLE: Readonly<Record<string, ExitCode>> = EXIT_CODES;

/** Anything the table does not know: the command failed without an answer to give. */
export const GENERIC_FAILURE: ExitCode = EXIT.negative;

/**
 * The exit status for a failure with stable code `code`. `status` is the HTTP status of a
 * daemon answer whose code the table does not list: 409 and 422 are refusals (the daemon's
 * negative answer), any other 4xx is input the daemon found bad.
 */
export function exitCodeFor(code: string, status?: number): ExitCode {
  const known = Object.hasOwn(TABLE, code) ? TABLE[code] : undefined;
  if (known !== undefined) return known;
  if (status === 409 || status === 422) return EXIT.negative;
  if (status !== undefined && status >= 400 && status < 500) return EXIT.badInput;
  return GENERIC_FAILURE;
}
