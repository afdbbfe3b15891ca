/** The daemon's limits when its operator sets none (`bermd --call-timeout` and the others). */
import type { Limits } from '@berm/protocol';

/**
 * 10 s a call, 64 MiB of guest memory, and 1 MiB of result: a result is JSON text a model will read, so
 * anything near that size is already far past what is useful in a context window, while the host holds
 * it several times over (guest memory, decoded string, parsed value, the MCP response). The same bound
 * applies to one host-call request.
 */
export const DEFAULT_LIMITS: Readonly<Limits> = {
  timeout_ms: 10_000,
  max_memory_bytes: 64 * 1024 * 1024,
  max_result_bytes: 1024 * 1024,
};

/** How deep `berm.call` may nest. */
export const DEFAULT_MAX_CALL_DEPTH = 4;
