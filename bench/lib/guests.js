// The guests the runtime and /mcp benchmarks call, built from WAT at start-up like the tests' fixtures.
// Kept out of bench/*.js because bench/run.js runs every file there as a benchmark.
import wabtInit from 'wabt';
import { writeManifestSection } from '@berm/manifest';

const wabt = await wabtInit();

/** Compiles WAT text to a wasm binary, with bulk memory (the prelude's memory.copy) on. */
export function wat2wasm(source) {
  const module = wabt.parseWat('bench.wat', source, { bulk_memory: true });
  try {
    module.resolveNames();
    module.validate();
    return Uint8Array.from(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}

// `echo` answers {"ok": <arguments>}; `chain` calls its own chain through berm.call until the host
// refuses at the depth limit, so with a depth limit of n one call runs n + 1 instances.
const PRELUDE = `
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 1024))
  (data (i32.const 0) "{\\"ok\\":")
  (data (i32.const 8) "}")
  (data (i32.const 16) "{\\"tool\\":\\"chain\\",\\"args\\":")
  (data (i32.const 48) ",")
  (func $alloc (export "berm_alloc") (param $len i32) (result i32) (local $ptr i32)
    (local.set $ptr (global.get $next))
    (global.set $next (i32.add (local.get $ptr) (local.get $len)))
    (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.eq (memory.grow (i32.const 16)) (i32.const -1)) (then unreachable))))
    (local.get $ptr))
  (func $put (param $src i32) (param $len i32) (memory.copy (call $alloc (local.get $len)) (local.get $src) (local.get $len)))
  (func $ok_wrap (param $src i32) (param $len i32) (result i64) (local $s i32)
    (local.set $s (global.get $next))
    (call $put (i32.const 0) (i32.const 6)) (call $put (local.get $src) (local.get $len)) (call $put (i32.const 8) (i32.const 1))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $s)) (i64.const 32)) (i64.extend_i32_u (i32.sub (global.get $next) (local.get $s)))))
  (func (export "berm_tool_echo") (param $p i32) (param $n i32) (result i64) (call $ok_wrap (local.get $p) (local.get $n)))`;

export const ECHO_WAT = `(module ${PRELUDE})`;

export const CHAIN_WAT = `(module
  (import "berm" "call" (func $call (param i32 i32) (result i64)))
  ${PRELUDE}
  (func (export "berm_tool_chain") (param $p i32) (param $n i32) (result i64) (local $s i32) (local $env i64)
    (local.set $s (global.get $next))
    (call $put (i32.const 16) (i32.const 23)) (call $put (local.get $p) (local.get $n)) (call $put (i32.const 48) (i32.const 1))
    (call $put (i32.add (local.get $p) (i32.const 1)) (i32.sub (local.get $n) (i32.const 1)))
    (local.set $env (call $call (local.get $s) (i32.sub (global.get $next) (local.get $s))))
    (call $ok_wrap (i32.wrap_i64 (i64.shr_u (local.get $env) (i64.const 32))) (i32.wrap_i64 (local.get $env)))))`;

// `spin` loops forever: a runaway, stopped only by its time limit. `grow` takes memory a page at a time
// until refused, then traps. `echo` as above.
export const RUNAWAY_WAT = `(module
  ${PRELUDE}
  (func (export "berm_tool_spin") (param i32 i32) (result i64) (loop $forever (br $forever)) (i64.const 0))
  (func (export "berm_tool_grow") (param i32 i32) (result i64)
    (loop $more (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    unreachable))`;

/** A manifest declaring `tools`, each taking {program?, text?}: what the benchmarks pass. */
export function manifest(tools) {
  return {
    abi_version: 1,
    version: '0.0.0',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools: tools.map((name) => ({
      name,
      description: name,
      arguments: { type: 'object', properties: { program: { type: 'string' }, text: { type: 'string' } } },
    })),
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
  };
}

/** A deployable image: `wat` compiled, with a manifest declaring `tools` as its `.berm.abi`. */
export function image(wat, tools) {
  return writeManifestSection(wat2wasm(wat), manifest(tools));
}

/** Bytes of `n` as unsigned LEB128, as wasm writes sizes. */
function leb128(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/**
 * `bytes` (a wasm module) grown to `size` bytes by a custom section named `bench.padding` at its end: still
 * a valid module, with the same manifest, standing for an image whose code and data are large.
 */
export function padded(bytes, size) {
  const name = new TextEncoder().encode('bench.padding');
  // The section's own header (id and size) and the name take some bytes; the payload fills the rest.
  let payload = size - bytes.length - 1 - name.length - 1;
  for (;;) {
    const body = [...leb128(name.length), ...name];
    const header = [0, ...leb128(body.length + payload)];
    const total = bytes.length + header.length + body.length + payload;
    if (total === size) {
      const out = new Uint8Array(size);
      out.set(bytes, 0);
      out.set(header, bytes.length);
      out.set(body, bytes.length + header.length);
      // Not zeros: bytes a transport or a store could not shrink.
      for (let i = bytes.length + header.length + body.length, x = 0x9e3779b9; i < size; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        out[i] = x & 0xff;
      }
      return out;
    }
    payload -= total - size;
  }
}
