// A shop for the receipts tests, in WAT against the guest ABI: each writing tool relays its arguments (a
// berm.http.fetch request) to the upstream and answers `{"ok": <the host's envelope>}`, so the test's
// stand-in upstream sees every write and its Idempotency-Key header; `key` answers berm.idempotency_key,
// `chain` relays its arguments to berm.call. `found` and `missing` are reconcile tools that ask the upstream
// `GET /lookup` with the key (`{idempotency-key}`) and then answer `{"done": true, "result": <the lookup's
// envelope>}` and `{"done": false}` whatever it said: what bermd makes of either answer is under test, not
// how a guest reads its upstream (examples/orders does that).
import type { JsonSchema, ManifestData, ToolSpec } from '@berm/manifest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { IDEMPOTENCY_KEY_META, REPLAYED_META } from '../dist/mcp/index.js';
import type { McpConnection } from './mcp-client.js';

/** The upstream's name in the shop's grant, resolved by each test to its stand-in. */
export const UPSTREAM = 'orders.example.com';

export type Answer = CallToolResult & { _meta?: Record<string, unknown> };

/** The code of the refusal or failure an answer carries. */
export function codeOf(result: Answer): string | undefined {
  return (result._meta?.['berm/error'] as { code?: string } | undefined)?.code;
}

/** The answer without the replayed mark: what a replay must repeat. */
export function unmarked(result: Answer): unknown {
  const { [REPLAYED_META]: _replayed, ...meta } = result._meta ?? {};
  return { ...result, _meta: meta };
}

/** A writing tool's arguments: a POST of `order` to `path` at `base`, its Idempotency-Key the call's own. */
export function writeArgs(base: string, path: string, order: string): Record<string, unknown> {
  return { method: 'POST', url: `${base}${path}`, headers: { 'idempotency-key': '{idempotency-key}' }, body: JSON.stringify({ order }) };
}

/** Calls `name` with `args`, sending `key` as the call's idempotency key (none when undefined). */
export function callWithKey(conn: McpConnection, name: string, args: Record<string, unknown>, key?: string): Promise<Answer> {
  return conn.client.callTool({
    name,
    arguments: args,
    ...(key === undefined ? {} : { _meta: { [IDEMPOTENCY_KEY_META]: key } }),
  }) as Promise<Answer>;
}

const RELAYS = ['place', 'status', 'notify', 'confirm', 'cancel', 'plain', 'settle', 'redo'] as const;

/** `text` as a WAT string literal, every byte escaped. */
function watBytes(text: string): string {
  return [...Buffer.from(text)].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
}

const DONE = '{"ok":{"done":true,"result":';
const NOT_DONE = '{"ok":{"done":false}}';

const wat = (upstream: string): string => {
  const lookup = JSON.stringify({ method: 'GET', url: `http://${upstream}/lookup`, headers: { 'idempotency-key': '{idempotency-key}' } });
  return `(module
  (import "berm" "http.fetch" (func $fetch (param i32 i32) (result i64)))
  (import "berm" "call" (func $host_call (param i32 i32) (result i64)))
  (import "berm" "idempotency_key" (func $key (param i32 i32) (result i64)))
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 1024))
  (data (i32.const 16) "{\\"ok\\":")
  (data (i32.const 32) "}")
  (data (i32.const 48) "{}")
  (data (i32.const 64) "${watBytes(DONE)}")
  (data (i32.const 96) "}}")
  (data (i32.const 112) "${watBytes(NOT_DONE)}")
  (data (i32.const 144) "${watBytes(lookup)}")
  (func $alloc (export "berm_alloc") (param $len i32) (result i32) (local $ptr i32) (local $end i32) (local $have i32)
    (local.set $ptr (global.get $next))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (local.get $have)) (i32.const 16)) (i32.const 1))) (i32.const -1))
        (then unreachable))))
    (global.set $next (local.get $end))
    (local.get $ptr))
  (func $put (param $src i32) (param $len i32) (memory.copy (call $alloc (local.get $len)) (local.get $src) (local.get $len)))
  ;; {"ok": <the envelope's bytes>}
  (func $relay (param $env i64) (result i64) (local $start i32)
    (local.set $start (global.get $next))
    (call $put (i32.const 16) (i32.const 6))
    (call $put (i32.wrap_i64 (i64.shr_u (local.get $env) (i64.const 32))) (i32.wrap_i64 (local.get $env)))
    (call $put (i32.const 32) (i32.const 1))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32)) (i64.extend_i32_u (i32.sub (global.get $next) (local.get $start)))))
${RELAYS.map((t) => `  (func (export "berm_tool_${t}") (param $p i32) (param $l i32) (result i64) (call $relay (call $fetch (local.get $p) (local.get $l))))`).join('\n')}
  (func (export "berm_tool_key") (param i32 i32) (result i64) (call $relay (call $key (i32.const 48) (i32.const 2))))
  (func (export "berm_tool_chain") (param $p i32) (param $l i32) (result i64) (call $relay (call $host_call (local.get $p) (local.get $l))))
  (func (export "berm_tool_found") (param i32 i32) (result i64) (local $env i64) (local $start i32)
    (local.set $env (call $fetch (i32.const 144) (i32.const ${Buffer.byteLength(lookup)})))
    (local.set $start (global.get $next))
    (call $put (i32.const 64) (i32.const ${DONE.length}))
    (call $put (i32.wrap_i64 (i64.shr_u (local.get $env) (i64.const 32))) (i32.wrap_i64 (local.get $env)))
    (call $put (i32.const 96) (i32.const 2))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32)) (i64.extend_i32_u (i32.sub (global.get $next) (local.get $start)))))
  (func (export "berm_tool_missing") (param i32 i32) (result i64)
    (drop (call $fetch (i32.const 144) (i32.const ${Buffer.byteLength(lookup)})))
    (i64.or (i64.shl (i64.const 112) (i64.const 32)) (i64.const ${NOT_DONE.length})))
)`;
};

/** The arguments every relaying tool takes: a berm.http.fetch request. */
const request = { type: 'object' };

function tool(name: string, description: string, extra: Partial<ToolSpec> = {}): ToolSpec {
  return { name, description, arguments: request, ...extra };
}

/** The shop's manifest; `foundReturns` declares the reconcile tool `found`'s returns. */
export function shopManifest(upstream: string, foundReturns?: JsonSchema): ManifestData {
  return sampleManifest({
    description: 'Places orders upstream',
    usage: '',
    tools: [
      tool('place', 'Places an order.', {
        effect: { kind: 'external_write', retry: 'idempotency_key', reconcile: 'status', compensation: 'cancel' },
      }),
      tool('status', 'Whether an order was placed.', { query: true }),
      tool('notify', 'Sends a message.', { effect: { kind: 'external_write', retry: 'none' } }),
      tool('confirm', 'Confirms an order.', { effect: { kind: 'external_write', retry: 'reconcile', reconcile: 'status' } }),
      tool('cancel', 'Cancels an order.', { effect: { kind: 'external_write', retry: 'idempotency_key' } }),
      tool('plain', 'Sends without a declared effect.'),
      tool('key', 'Answers its idempotency key.', { effect: { kind: 'external_write', retry: 'idempotency_key' } }),
      tool('chain', 'Relays its arguments to berm.call.', { effect: { kind: 'external_write', retry: 'idempotency_key' } }),
      tool('settle', 'Places an order, reconciled by found.', {
        effect: { kind: 'external_write', retry: 'reconcile', reconcile: 'found' },
      }),
      tool('redo', 'Places an order, reconciled by missing.', {
        effect: { kind: 'external_write', retry: 'reconcile', reconcile: 'missing' },
      }),
      tool('found', 'Finds every order placed.', { query: true, ...(foundReturns === undefined ? {} : { returns: foundReturns }) }),
      tool('missing', 'Finds no order placed.', { query: true }),
    ],
    deps: { programs: [], syscalls: { 'berm.http.fetch': [upstream] }, secrets: [] },
  });
}

export async function shopImage(upstream: string, foundReturns?: JsonSchema): Promise<Uint8Array> {
  return buildImage(wat(upstream), shopManifest(upstream, foundReturns));
}
