/** The syscalls beyond the ABI that bermd can serve, when its operator turns them on (`--serve`). */
export const FETCH = 'berm.http.fetch';
export const PROXY = 'berm.http.proxy';
export const SERVABLE_SYSCALLS: readonly string[] = [FETCH, PROXY];

/** 1 MiB: the default bound on a response body handed to a guest (`--http-max-body`). */
export const DEFAULT_HTTP_MAX_BODY = 1024 * 1024;
