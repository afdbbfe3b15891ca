// Harness images for tests, built from WAT generated here: a module that keeps the guest ABI of
// spec §4 for a given manifest (memory, a bump berm_alloc, one berm_tool_<name> per tool), with
// options that break it in each way bermd refuses at deploy.
import { customSection, type ManifestData } from '@berm/manifest';
import { buildImage, sampleManifest } from './wat.js';

/** What a tool export does when called. */
export type ToolBehaviour =
  /** Answers `{"ok": <the arguments it was given>}`. */
  | { kind: 'echo' }
  /** Answers the given envelope (e.g. `{ok: 1}` or `{error: "no"}`), held in a data segment. */
  | { kind: 'const'; envelope: unknown }
  /** Traps. */
  | { kind: 'trap' }
  /** A hand-written body over `(param $ptr i32) (param $len i32) (result i64)`; `$alloc` and `$pack` are in scope. */
  | { kind: 'wat'; body: string }
  /** Answers `before`, the bytes it was given, then `after`: its input inside an envelope written around it. */
  | { kind: 'wrap'; before: string; after: string }
  /** Makes the host call imported at `import` (an index of `imports`) with `request`, and answers what the host answered. */
  | { kind: 'relay'; import: number; request: unknown };

export interface ImportSpec {
  /** Dotted host-call name, `module.field`. */
  name: string;
  kind?: 'func' | 'global' | 'table';
  /** For functions; defaults to the host-call signature `(i32, i32) -> i64`. */
  params?: string[];
  results?: string[];
}

export interface HarnessOptions {
  /** Export names to leave out: `memory`, `berm_alloc`, `berm_tool_<name>`. */
  omit?: string[];
  /** Export signature overrides by export name; the body then returns zeros. */
  signatures?: Record<string, { params: string[]; results: string[] }>;
  /** Imports to add. */
  imports?: ImportSpec[];
  /** Behaviour per tool name; tools not listed echo. */
  tools?: Record<string, ToolBehaviour>;
  /** Exports beyond the tools' (`berm_prompt_<name>`, `berm_resource_read`, `berm_complete`), each with the tools' signature. */
  exports?: Record<string, ToolBehaviour>;
  /** Module fields appended as written (e.g. `(global (export "memory") i32 (i32.const 0))`). */
  extraWat?: string;
  /** Bytes of filler in a custom section named `pad`, to make large images; `padSeed` varies the filler. */
  padBytes?: number;
  padSeed?: number;
}

const encoder = new TextEncoder();

function watString(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += `\\${b.toString(16).padStart(2, '0')}`;
  return out;
}

function zeroOf(type: string): string {
  return `(${type}.const 0)`;
}

function watName(name: string): string {
  return `$${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** The WAT text of a harness for `manifest`. */
export function harnessWat(manifest: ManifestData, options: HarnessOptions = {}): string {
  const omit = new Set(options.omit ?? []);
  const signatures = options.signatures ?? {};
  const lines: string[] = ['(module'];

  (options.imports ?? []).forEach((imp, i) => {
    const dot = imp.name.indexOf('.');
    const module = dot < 0 ? imp.name : imp.name.slice(0, dot);
    const field = dot < 0 ? '' : imp.name.slice(dot + 1);
    const kind = imp.kind ?? 'func';
    const desc =
      kind === 'func'
        ? `(func $import${i} (param ${(imp.params ?? ['i32', 'i32']).join(' ')}) (result ${(imp.results ?? ['i64']).join(' ')}))`
        : kind === 'global'
          ? `(global $import${i} i32)`
          : `(table $import${i} 1 funcref)`;
    lines.push(`  (import "${module}" "${field}" ${desc})`);
  });

  // Constant strings sit in the first page from byte 16; the bump allocator starts past them.
  const constants: { at: number; bytes: Uint8Array }[] = [];
  let next = 16;
  const constant = (text: string): { at: number; len: number } => {
    const bytes = encoder.encode(text);
    constants.push({ at: next, bytes });
    const at = next;
    next += (bytes.length + 15) & ~15;
    return { at, len: bytes.length };
  };
  const okPrefix = constant('{"ok":');

  const bodyOf = (behaviour: ToolBehaviour): string => {
    switch (behaviour.kind) {
      case 'echo':
        return `
    (local $out i32)
    (local.set $out (call $alloc (i32.add (local.get $len) (i32.const ${okPrefix.len + 1}))))
    (memory.copy (local.get $out) (i32.const ${okPrefix.at}) (i32.const ${okPrefix.len}))
    (memory.copy (i32.add (local.get $out) (i32.const ${okPrefix.len})) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.add (local.get $len) (i32.const ${okPrefix.len}))) (i32.const 125))
    (call $pack (local.get $out) (i32.add (local.get $len) (i32.const ${okPrefix.len + 1})))`;
      case 'const': {
        const c = constant(JSON.stringify(behaviour.envelope));
        return `\n    (call $pack (i32.const ${c.at}) (i32.const ${c.len}))`;
      }
      case 'trap':
        return '\n    (unreachable)';
      case 'wat':
        return `\n    ${behaviour.body}`;
      case 'wrap': {
        const before = constant(behaviour.before);
        const after = constant(behaviour.after);
        const total = `(i32.add (local.get $len) (i32.const ${before.len + after.len}))`;
        return `
    (local $out i32)
    (local.set $out (call $alloc ${total}))
    (memory.copy (local.get $out) (i32.const ${before.at}) (i32.const ${before.len}))
    (memory.copy (i32.add (local.get $out) (i32.const ${before.len})) (local.get $ptr) (local.get $len))
    (memory.copy (i32.add (local.get $out) (i32.add (local.get $len) (i32.const ${before.len}))) (i32.const ${after.at}) (i32.const ${after.len}))
    (call $pack (local.get $out) ${total})`;
      }
      case 'relay': {
        const c = constant(JSON.stringify(behaviour.request));
        return `\n    (call $import${behaviour.import} (i32.const ${c.at}) (i32.const ${c.len}))`;
      }
    }
  };
  const toolBodies = manifest.tools.map((tool) => bodyOf(options.tools?.[tool.name] ?? { kind: 'echo' }));
  const extraBodies = Object.entries(options.exports ?? {}).map(([name, behaviour]) => [name, bodyOf(behaviour)] as const);
  const heapStart = Math.max(1024, (next + 1023) & ~1023);

  lines.push(`  (memory $memory${omit.has('memory') ? '' : ' (export "memory")'} ${Math.max(1, Math.ceil((heapStart + 1) / 65536))})`);
  lines.push(`  (global $next (mut i32) (i32.const ${heapStart}))`);
  for (const c of constants) lines.push(`  (data (i32.const ${c.at}) "${watString(c.bytes)}")`);

  lines.push(`  (func $alloc (param $len i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $next))
    (global.set $next (i32.add (local.get $ptr) (local.get $len)))
    (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq
              (memory.grow (i32.add (i32.div_u (i32.sub (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
                                               (i32.const 65536))
                                    (i32.const 1)))
              (i32.const -1))
          (then unreachable))))
    (local.get $ptr))`);
  lines.push(`  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len))))`);

  const exported = (name: string, params: string, results: string, body: string): void => {
    if (omit.has(name)) return;
    const override = signatures[name];
    if (override !== undefined) {
      const ps = override.params.map((p, i) => `(param $p${i} ${p})`).join(' ');
      const rs = override.results.length > 0 ? `(result ${override.results.join(' ')})` : '';
      lines.push(`  (func ${watName(`x_${name}`)} (export "${name}") ${ps} ${rs} ${override.results.map(zeroOf).join(' ')})`);
    } else {
      lines.push(`  (func ${watName(`x_${name}`)} (export "${name}") ${params} ${results}${body})`);
    }
  };
  exported('berm_alloc', '(param $len i32)', '(result i32)', '\n    (call $alloc (local.get $len))');
  manifest.tools.forEach((tool, i) => {
    exported(`berm_tool_${tool.name}`, '(param $ptr i32) (param $len i32)', '(result i64)', toolBodies[i]!);
  });
  for (const [name, body] of extraBodies) exported(name, '(param $ptr i32) (param $len i32)', '(result i64)', body);

  if (options.extraWat) lines.push(`  ${options.extraWat}`);
  lines.push(')');
  return lines.join('\n');
}

/** Deterministic filler, so two images that differ only in `seed` have different digests. */
function filler(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
    out[i + 1] = (x >>> 8) & 0xff;
    out[i + 2] = (x >>> 16) & 0xff;
    out[i + 3] = x >>> 24;
  }
  return out;
}

/** A wasm image of a harness for `manifest` (default: `sampleManifest()`, one echo tool). */
export async function harnessImage(manifest: ManifestData = sampleManifest(), options: HarnessOptions = {}): Promise<Uint8Array> {
  const image = await buildImage(harnessWat(manifest, options), manifest);
  if (!options.padBytes) return image;
  const pad = customSection('pad', filler(options.padBytes, options.padSeed ?? 1));
  const out = new Uint8Array(image.length + pad.length);
  out.set(image);
  out.set(pad, image.length);
  return out;
}

/** A manifest with the given tools (each echoing), for tests that only care about names. */
export function manifestWithTools(tools: string[], overrides: Partial<ManifestData> = {}): ManifestData {
  const base = sampleManifest();
  const template = base.tools[0]!;
  return { ...base, tools: tools.map((name) => ({ ...template, name, description: `The ${name} tool.` })), ...overrides };
}

export { sampleManifest };
