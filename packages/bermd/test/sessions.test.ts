// The 2025 sessions' cap in one process: what McpSessions counts while `initialize`s are being answered.
// A bermd process under a burst of them is in bounds.test.ts.
import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../dist/auth/index.js';
import { McpSessions, SessionCapError } from '../dist/mcp/index.js';
import { quietCore } from './mcp-core.js';

const core = quietCore();

describe('McpSessions at its cap', () => {
  it('counts a session from when its initialize is accepted, before the transport gives it an id', async () => {
    const sessions = new McpSessions(core, 60_000, 3);
    try {
      // Three initializes accepted and none answered yet: what a burst looks like from inside.
      const opening = await Promise.all([sessions.open(ANONYMOUS), sessions.open(ANONYMOUS), sessions.open(ANONYMOUS)]);
      expect(opening.map((s) => s.id)).toEqual([undefined, undefined, undefined]);
      expect(sessions.size).toBe(3);
      const refused = await sessions.open(ANONYMOUS).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SessionCapError);
      expect((refused as SessionCapError).message).toBe(
        'bermd is at its cap of 3 MCP sessions, all in use (--max-sessions); try again when one ends',
      );

      // An initialize answered without a session (the transport refused it) frees its place.
      sessions.answered(opening[0]!);
      expect(sessions.size).toBe(2);
      await sessions.open(ANONYMOUS);
      expect(sessions.size).toBe(3);
      await expect(sessions.open(ANONYMOUS)).rejects.toBeInstanceOf(SessionCapError);
    } finally {
      await sessions.close();
    }
    expect(sessions.size).toBe(0);
  });
});
