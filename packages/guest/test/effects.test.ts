// Effect contracts written as doc tags (@effect, @retry, @reconcile, @compensation): rendered into the
// manifest by a real build, and each problem refused where its tag is written (file, line, column).
import { build, isGuestError, type Diagnostic } from '@berm/guest/build';
import type { ManifestData } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeProject, writeProject } from './helpers/project.js';

const SHOP = `@json
class Order {
  item: string = "";
  key: string = "";
}

@json
class Ref {
  key: string = "";
}

/**
 * Places an order.
 * @effect external_write
 * @retry reconcile
 * @reconcile findOrder
 * @compensation cancelOrder
 */
export function placeOrder(order: Order): string {
  return order.key;
}

/**
 * Tells whether an order was placed.
 * @query
 */
export function findOrder(order: Order): bool {
  return order.key.length > 0;
}

/**
 * Cancels an order.
 * @effect external_write
 * @retry idempotency_key
 */
export function cancelOrder(ref: Ref): void {}

/**
 * Adds nothing up.
 * @effect none
 */
export function total(): i32 {
  return 0;
}

/** Says nothing of its effect. */
export function plain(): i32 {
  return 1;
}
`;

const BAD = `@json
class Order {
  item: string = "";
}

@json
class Other {
  key: string = "";
}

/**
 * @effect sometimes
 */
export function badKind(): void {}

/**
 * @effect external_write
 */
export function noRetry(): void {}

/**
 * @effect external_write
 * @retry twice
 */
export function badRetry(): void {}

/**
 * @retry none
 */
export function orphan(): void {}

/**
 * @effect none
 * @compensation badKind
 */
export function noneWith(): void {}

/**
 * @effect external_write
 * @retry reconcile
 * @reconcile lookup
 */
export function writer(order: Order): void {}

/**
 * @query
 */
export function lookup(other: Other): bool {
  return true;
}
`;

/** The 1-based line and column of `needle`, found after `after` in `text`. */
function at(text: string, after: string, needle: string): { line: number; column: number } {
  const offset = text.indexOf(needle, text.indexOf(after));
  if (offset < 0) throw new Error(`${needle} is not in the source`);
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

describe('effect tags rendered', () => {
  let dir: string;
  let manifest: ManifestData;
  beforeAll(async () => {
    dir = await writeProject({ 'package.json': { name: 'shop' }, 'assembly/index.ts': SHOP });
    manifest = (await build({ dir })).manifest;
  }, 180_000);
  afterAll(async () => {
    await removeProject(dir);
  });

  const effect = (name: string) => manifest.tools.find((t) => t.name === name)!.effect;

  it('writes each tool’s declared effect into the manifest, and none for a tool without tags', () => {
    expect(effect('placeOrder')).toEqual({
      kind: 'external_write',
      retry: 'reconcile',
      reconcile: 'findOrder',
      compensation: 'cancelOrder',
    });
    expect(effect('cancelOrder')).toEqual({ kind: 'external_write', retry: 'idempotency_key' });
    expect(effect('total')).toEqual({ kind: 'none' });
    expect(effect('findOrder')).toBeUndefined();
    expect(effect('plain')).toBeUndefined();
  });

  it('keeps the tags out of the description', () => {
    expect(manifest.tools.find((t) => t.name === 'placeOrder')!.description).toBe('Places an order.');
  });
});

describe('effect tags refused', () => {
  let diagnostics: Diagnostic[];
  beforeAll(async () => {
    const dir = await writeProject({ 'package.json': { name: 'bad' }, 'assembly/index.ts': BAD });
    try {
      const error = await build({ dir }).catch((e: unknown) => e);
      if (!isGuestError(error) || error.code !== 'build-error') throw new Error(`expected a build error, got ${String(error)}`);
      diagnostics = (error.details as { diagnostics: Diagnostic[] }).diagnostics;
    } finally {
      await removeProject(dir);
    }
  }, 180_000);

  function find(pattern: RegExp): Diagnostic {
    const found = diagnostics.filter((d) => pattern.test(d.message));
    if (found.length !== 1) throw new Error(`expected one diagnostic matching ${pattern}, got ${JSON.stringify(diagnostics, null, 2)}`);
    return found[0]!;
  }

  it('an unknown kind, a write without a retry mode, an unknown retry mode, each at its tag', () => {
    expect(find(/tool badKind:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(BAD, '', '@effect sometimes'),
      message: expect.stringContaining('write "@effect none" or "@effect external_write"'),
    });
    expect(find(/tool noRetry:/)).toMatchObject({
      ...at(BAD, '', '@effect external_write'),
      message: expect.stringContaining('add "@retry idempotency_key"'),
    });
    expect(find(/tool badRetry:/)).toMatchObject({ ...at(BAD, '', '@retry twice'), message: expect.stringContaining('@retry is "twice"') });
  });

  it('a retry mode without @effect, a compensation beside @effect none', () => {
    expect(find(/tool orphan:/)).toMatchObject({
      ...at(BAD, '', '@retry none'),
      message: expect.stringContaining('@retry without @effect'),
    });
    expect(find(/tool noneWith:/)).toMatchObject({
      ...at(BAD, '', '@compensation badKind'),
      message: expect.stringContaining('remove @compensation'),
    });
  });

  it('a reconcile query taking other arguments, at @reconcile, with the code a deploy would refuse it with', () => {
    expect(find(/tool "writer" names reconcile tool "lookup"/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(BAD, '', '@reconcile lookup'),
      message: expect.stringContaining('give both the same arguments schema (effect-reconcile-arguments)'),
    });
  });
});
