import { describe, expect, it } from 'vitest';
import { effectOf, Manifest, reachesOutside, undeclaredEffects, type ManifestErrorCode } from '@berm/manifest';
import { expectCode, manifestError } from './support.js';

const orderArgs = { type: 'object', properties: { item: { type: 'string' }, key: { type: 'string' } }, required: ['item', 'key'] };

/** A shop: `place` writes outside, `find` tells whether an order was placed, `cancel` undoes one. */
function shop(effect: unknown, over: { find?: Record<string, unknown> } = {}) {
  return {
    abi_version: 1,
    tools: [
      { name: 'place', arguments: orderArgs, effect },
      { name: 'find', arguments: orderArgs, query: true, ...over.find },
      { name: 'cancel', arguments: { type: 'object', properties: { key: { type: 'string' } } } },
    ],
  };
}

function refused(value: unknown, code: ManifestErrorCode, path: string): string {
  const error = manifestError(() => Manifest.fromJSON(value));
  expectCode(error, code);
  expect(error.path).toBe(path);
  expect(error.message).toContain(`at ${path}`);
  return error.message;
}

describe('effect contracts: what the reader accepts', () => {
  it('keeps a full external_write contract and a none, after the tool members, as written', () => {
    const effect = { kind: 'external_write', retry: 'reconcile', reconcile: 'find', compensation: 'cancel' };
    const m = Manifest.fromJSON(shop(effect));
    expect(m.tools[0]!.effect).toEqual(effect);
    expect(Object.keys(m.tools[0]!)).toEqual(['name', 'description', 'arguments', 'effect']);
    expect(Manifest.fromJSON(shop({ kind: 'none' })).tools[0]!.effect).toEqual({ kind: 'none' });
  });

  it('accepts a reconcile tool beside retry idempotency_key, and a query declaring none', () => {
    const m = Manifest.fromJSON(
      shop({ kind: 'external_write', retry: 'idempotency_key', reconcile: 'find' }, { find: { effect: { kind: 'none' } } }),
    );
    expect(m.tools.map((t) => t.effect?.kind)).toEqual(['external_write', 'none', undefined]);
  });

  it('reads an undeclared query as none and an undeclared other tool as unknown', () => {
    const m = Manifest.fromJSON(shop(undefined));
    expect(m.tools.map(effectOf)).toEqual([undefined, { kind: 'none' }, undefined]);
    expect(undeclaredEffects(m.data)).toEqual(['place', 'cancel']);
  });

  it('says whether the program reaches outside through an HTTP syscall', () => {
    const with_ = (syscalls: Record<string, string[]>) => Manifest.fromJSON({ ...shop(undefined), deps: { syscalls } }).data;
    expect(reachesOutside(with_({}))).toBe(false);
    expect(reachesOutside(with_({ 'berm.http.fetch': ['api.example.com'] }))).toBe(true);
    expect(reachesOutside(with_({ 'berm.http.proxy': ['api.example.com'] }))).toBe(true);
    expect(reachesOutside(with_({ 'acme.clock': [] }))).toBe(false);
  });
});

describe('effect contracts: what the reader refuses', () => {
  it('a kind or retry mode outside the contract, by the schema', () => {
    const error = manifestError(() => Manifest.fromJSON(shop({ kind: 'sometimes' })));
    expectCode(error, 'invalid-manifest');
    expect(error.path).toBe('/tools/0/effect/kind');
    expect(error.message).toContain('"none", "external_write"');
    const retry = manifestError(() => Manifest.fromJSON(shop({ kind: 'external_write', retry: 'twice' })));
    expect(retry.path).toBe('/tools/0/effect/retry');
    expect(retry.message).toContain('"idempotency_key", "reconcile", "none"');
  });

  it('an external_write without a retry mode, and a none with one', () => {
    expect(refused(shop({ kind: 'external_write' }), 'invalid-manifest', '/tools/0/effect/retry')).toContain('tool "place"');
    expect(refused(shop({ kind: 'none', retry: 'none' }), 'invalid-manifest', '/tools/0/effect/retry')).toContain('kind "external_write"');
    refused(shop({ kind: 'none', compensation: 'cancel' }), 'invalid-manifest', '/tools/0/effect/compensation');
  });

  it('a reference to a tool the program does not declare', () => {
    const message = refused(
      shop({ kind: 'external_write', retry: 'none', compensation: 'refund' }),
      'effect-unknown-tool',
      '/tools/0/effect/compensation',
    );
    expect(message).toContain('tool "place" names compensation tool "refund"');
    expect(message).toContain('"place", "find", "cancel"');
    refused(shop({ kind: 'external_write', retry: 'reconcile', reconcile: 'lookup' }), 'effect-unknown-tool', '/tools/0/effect/reconcile');
  });

  it('retry reconcile without a reconcile tool', () => {
    const message = refused(shop({ kind: 'external_write', retry: 'reconcile' }), 'effect-reconcile-missing', '/tools/0/effect/reconcile');
    expect(message).toContain('add "reconcile": "TOOL"');
  });

  it('a reconcile tool that is not a query', () => {
    const message = refused(
      shop({ kind: 'external_write', retry: 'reconcile', reconcile: 'find' }, { find: { query: false } }),
      'effect-reconcile-not-query',
      '/tools/0/effect/reconcile',
    );
    expect(message).toContain('mark "find" "query": true');
  });

  it('a reconcile tool whose arguments schema differs, however its members are ordered', () => {
    const reordered = { required: ['item', 'key'], properties: { key: { type: 'string' }, item: { type: 'string' } }, type: 'object' };
    expect(() =>
      Manifest.fromJSON(shop({ kind: 'external_write', retry: 'reconcile', reconcile: 'find' }, { find: { arguments: reordered } })),
    ).not.toThrow();
    const narrower = { ...orderArgs, required: ['key'] };
    const message = refused(
      shop({ kind: 'external_write', retry: 'reconcile', reconcile: 'find' }, { find: { arguments: narrower } }),
      'effect-reconcile-arguments',
      '/tools/0/effect/reconcile',
    );
    expect(message).toContain('give both the same arguments schema');
  });

  it('a query declaring an external write', () => {
    const value = shop(undefined, { find: { effect: { kind: 'external_write', retry: 'none' } } });
    expect(refused(value, 'effect-on-query', '/tools/1/effect/kind')).toContain('tool "find" is a query');
  });
});
