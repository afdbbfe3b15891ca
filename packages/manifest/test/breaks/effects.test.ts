import { describe, expect, it } from 'vitest';
import { breaks, type Effect, type ToolSpec } from '@berm/manifest';
import { manifest, places, tool } from './support.js';

const write = (retry: 'idempotency_key' | 'reconcile' | 'none', more: Partial<Effect> = {}): Effect =>
  ({ kind: 'external_write', retry, ...more }) as Effect;

/** The breaks of tool `send` going from `old` to `next` (each a tool's members beyond its name). */
function change(old: Partial<ToolSpec>, next: Partial<ToolSpec>) {
  return breaks(manifest({ tools: [tool('send', old)] }), manifest({ tools: [tool('send', next)] }));
}

describe('breaks: effect contracts', () => {
  it('writing outside where nothing was written is effect-now-writes', () => {
    const found = change({ effect: { kind: 'none' } }, { effect: write('idempotency_key') });
    expect(found).toEqual([
      {
        code: 'effect-now-writes',
        tool: 'send',
        path: '/effect',
        message:
          'tool `send` may now write outside: a retried call may act twice (was kind none, now external_write with retry idempotency_key)',
      },
    ]);
  });

  it('a query becoming a writer breaks both ways it promised', () => {
    expect(places(change({ query: true }, { effect: write('none') }))).toEqual([
      { code: 'tool-no-longer-query', path: '/query' },
      { code: 'effect-now-writes', path: '/effect' },
    ]);
  });

  it('each weaker retry mode is retry-weakened; each stronger one breaks nothing', () => {
    const modes = ['idempotency_key', 'reconcile', 'none'] as const;
    for (const [i, from] of modes.entries()) {
      for (const [j, to] of modes.entries()) {
        const found = change({ effect: write(from) }, { effect: write(to) });
        if (j > i) {
          expect(places(found), `${from} -> ${to}`).toEqual([{ code: 'retry-weakened', path: '/effect/retry' }]);
          expect(found[0]!.message).toBe(
            `tool \`send\` no longer keeps a retried call from writing as it did (was external_write with retry ${from}, now external_write with retry ${to})`,
          );
        } else {
          expect(found, `${from} -> ${to}`).toEqual([]);
        }
      }
    }
  });

  it('writing nothing any more breaks nothing, whatever the retry mode was', () => {
    for (const retry of ['idempotency_key', 'reconcile', 'none'] as const) {
      expect(change({ effect: write(retry) }, { effect: { kind: 'none' } })).toEqual([]);
    }
  });

  it('declaring a contract where there was none breaks nothing', () => {
    expect(change({}, { effect: write('none') })).toEqual([]);
    expect(change({}, { effect: { kind: 'none' } })).toEqual([]);
  });

  it('dropping a contract is read as the weakest one: a safe retry weakened, a declared none now writing', () => {
    expect(places(change({ effect: write('idempotency_key') }, {}))).toEqual([{ code: 'retry-weakened', path: '/effect' }]);
    expect(change({ effect: write('reconcile', { reconcile: 'find' }) }, {})[0]!.message).toContain('now undeclared');
    expect(change({ effect: write('none') }, {})).toEqual([]);
    expect(places(change({ effect: { kind: 'none' } }, {}))).toEqual([{ code: 'effect-now-writes', path: '/effect' }]);
  });

  it('a query that stops being one without declaring an effect is reported once, as tool-no-longer-query', () => {
    expect(places(change({ query: true }, {}))).toEqual([{ code: 'tool-no-longer-query', path: '/query' }]);
  });

  it('changing or dropping the reconcile and compensation tools breaks nothing', () => {
    const old = { effect: write('idempotency_key', { reconcile: 'find', compensation: 'cancel' }) };
    expect(change(old, { effect: write('idempotency_key') })).toEqual([]);
    expect(change(old, { effect: write('idempotency_key', { reconcile: 'lookup', compensation: 'refund' }) })).toEqual([]);
  });

  it('a malformed effect in a manifest never validated promises nothing rather than throwing', () => {
    const broken = { effect: null } as unknown as Partial<ToolSpec>;
    expect(change(broken, { effect: write('none') })).toEqual([]);
    expect(change({ effect: write('idempotency_key') }, broken)).toHaveLength(1);
  });
});
