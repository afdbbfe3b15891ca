/**
 * Every error the library raises, in one module, each with a stable string code.
 * Callers branch on `code`, never on the message or the class name.
 */
export type ManifestErrorCode =
  | 'not-an-image'
  | 'component-not-supported'
  | 'truncated'
  | 'no-manifest'
  | 'bad-record'
  | 'invalid-manifest'
  | 'bad-module'
  /** An `effect` whose reconcile or compensation names a tool the manifest does not declare. */
  | 'effect-unknown-tool'
  /** An `effect` naming a reconcile tool that is not a query. */
  | 'effect-reconcile-not-query'
  /** `retry: "reconcile"` without a `reconcile` tool. */
  | 'effect-reconcile-missing'
  /** A reconcile tool whose arguments schema is not the write's. */
  | 'effect-reconcile-arguments'
  /** A query tool declaring an effect other than `none`. */
  | 'effect-on-query'
  /** A resource path that is not a relative URI path. */
  | 'resource-path-invalid'
  /** A resource template that is not an RFC 6570 level-1 template, or completes a variable it lacks. */
  | 'resource-template-invalid'
  /** A resource declared at `usage`, where the host serves the harness's usage. */
  | 'resource-path-reserved';

export interface ErrorLocation {
  /** Byte offset: in the file for framing errors, in the `.berm.abi` stream for record errors. */
  offset?: number;
  /** JSON pointer into the merged manifest, for validation errors. */
  path?: string;
}

export class ManifestError extends Error {
  readonly code: ManifestErrorCode;
  readonly offset?: number;
  readonly path?: string;

  constructor(code: ManifestErrorCode, message: string, where: ErrorLocation = {}) {
    super(message);
    this.name = 'ManifestError';
    this.code = code;
    if (where.offset !== undefined) this.offset = where.offset;
    if (where.path !== undefined) this.path = where.path;
  }

  toJSON(): { code: string; message: string; offset?: number; path?: string } {
    return { code: this.code, message: this.message, offset: this.offset, path: this.path };
  }
}

export function isManifestError(e: unknown): e is ManifestError {
  return e instanceof ManifestError;
}
