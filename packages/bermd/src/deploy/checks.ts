import { createHash } from 'node:crypto';
import { ABI_VERSION, Manifest, isManifestError } from '@berm/manifest';
import { ABI_HOST_CALLS, ALLOC_EXPORT, DEFAULT_SYSCALLS, toolExport } from '@berm/protocol';
import { surfaceExports } from './surface-checks.js';
import { wireCodeOf } from '../error-table.js';
import { BermdError, type BermdErrorCode } from '../errors.js';
import { formatType, readSignatures, sameType, SignatureReadError, type FuncType, type ModuleSignatures } from './wasm-signatures.js';

const HOST_CALL: FuncType = { params: ['i32', 'i32'], results: ['i64'] };
const TOOL_SIGNATURE: FuncType = { params: ['i32', 'i32'], results: ['i64'] };
const ALLOC_SIGNATURE: FuncType = { params: ['i32'], results: ['i32'] };
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

export interface CheckPolicy {
  /** Syscalls beyond the ABI's own that this daemon serves (none unless its operator enables one). */
  servedSyscalls: ReadonlySet<string>;
  /**
   * What V8 compiles in place of the image (e.g. the image with its memories capped), so the module
   * that runs is the one compiled at deploy. May throw a `BermdError` to refuse the image. The digest
   * and the stored bytes stay those of the image. `maxMemoryBytes` is the harness's own memory cap, when
   * its bindings set one.
   */
  rewrite?: (bytes: Uint8Array, maxMemoryBytes?: number) => Uint8Array;
  /** Runs each phase of a deploy (`read`, `compile`, `checks`, then the registry's `gate` and `commit`) as a span; unset, they just run. */
  phase?: DeployPhase;
}

/** Runs `fn` as the deploy phase `name` (a span when tracing is on). */
export type DeployPhase = <T>(name: string, fn: () => Promise<T> | T) => Promise<T>;

/** One reason an image is refused; a refusal lists them all and is coded by the first. */
export interface Problem {
  code: BermdErrorCode;
  message: string;
  export?: string;
  import?: string;
  syscall?: string;
}

/** An image that passed every deploy check, compiled once so an invocation pays only instantiation. */
export interface CheckedImage {
  digest: string;
  manifest: Manifest;
  module: WebAssembly.Module;
}

export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/**
 * Everything that decides whether `bytes` may be deployed, in order: the manifest reads, the file is
 * wasm, the ABI version is ours, V8 compiles it, and its exports and imports keep the guest ABI.
 * Throws a `BermdError`; returns the compiled module so deploy never compiles twice.
 */
export async function checkImage(bytes: Uint8Array, policy: CheckPolicy, harness: { maxMemoryBytes?: number } = {}): Promise<CheckedImage> {
  if (startsWith(bytes, ELF_MAGIC)) {
    throw new BermdError('not-wasm', 'only wasm images can be deployed: this is an ELF file (inspect and breaks read it, deploy does not)');
  }
  const phase: DeployPhase = policy.phase ?? (async (_name, fn) => fn());
  let manifest: Manifest;
  try {
    manifest = await phase('read', () => Manifest.fromImage(bytes));
  } catch (e) {
    if (isManifestError(e)) {
      const where: Record<string, unknown> = { reason: e.code };
      if (e.offset !== undefined) where.offset = e.offset;
      if (e.path !== undefined) where.path = e.path;
      throw new BermdError('bad-image', `the image's manifest cannot be read: ${e.message}`, where);
    }
    throw e;
  }
  if (!startsWith(bytes, WASM_MAGIC)) {
    throw new BermdError('not-wasm', 'only wasm images can be deployed');
  }
  if (manifest.data.abi_version !== ABI_VERSION) {
    throw new BermdError(
      'abi-version',
      `the image is built for abi_version ${manifest.data.abi_version}; this bermd runs abi_version ${ABI_VERSION}`,
      { abi_version: manifest.data.abi_version, supported: [ABI_VERSION] },
    );
  }
  const compiled = policy.rewrite?.(bytes, harness.maxMemoryBytes) ?? bytes;
  let module: WebAssembly.Module;
  try {
    module = await phase('compile', () => WebAssembly.compile(compiled));
  } catch (e) {
    throw new BermdError('compile-error', `the image does not compile: ${(e as Error).message}`);
  }
  const problems = await phase('checks', () => abiProblems(bytes, manifest, policy));
  if (problems.length > 0) {
    const first = problems[0]!;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
    throw new BermdError(first.code, `${first.message}${more}`, { problems });
  }
  return { digest: digestOf(bytes), manifest, module };
}

/** The ways a compiled module breaks the guest ABI (spec §4) for the tools and syscalls its manifest declares. */
export function abiProblems(bytes: Uint8Array, manifest: Manifest, policy: CheckPolicy): Problem[] {
  let signatures: ModuleSignatures;
  try {
    signatures = readSignatures(bytes);
  } catch (e) {
    if (e instanceof SignatureReadError)
      return [{ code: wireCodeOf(e), message: `the module uses a form bermd cannot check: ${e.message}` }];
    throw e;
  }
  const problems: Problem[] = [];
  const exports = new Map(signatures.exports.map((x) => [x.name, x]));

  const memory = exports.get('memory');
  if (memory === undefined)
    problems.push({ code: 'missing-memory', message: 'the image does not export its memory as "memory"', export: 'memory' });
  else if (memory.kind !== 'memory')
    problems.push({ code: 'missing-memory', message: `the export "memory" is a ${memory.kind}, not a memory`, export: 'memory' });

  const exportedFunction = (name: string, want: FuncType, missing: BermdErrorCode, what: string): void => {
    const x = exports.get(name);
    if (x === undefined) {
      problems.push({ code: missing, message: `the image does not export ${name}, ${what}`, export: name });
    } else if (x.kind !== 'function' || x.type === undefined) {
      problems.push({
        code: 'bad-export-signature',
        message: `the export ${name} is a ${x.kind}, not a function ${formatType(want)}`,
        export: name,
      });
    } else if (!sameType(x.type, want)) {
      problems.push({
        code: 'bad-export-signature',
        message: `the export ${name} has signature ${formatType(x.type)}; the ABI requires ${formatType(want)}`,
        export: name,
      });
    }
  };
  exportedFunction(ALLOC_EXPORT, ALLOC_SIGNATURE, 'missing-alloc', 'the allocator the host writes arguments with');
  for (const tool of manifest.tools) {
    exportedFunction(toolExport(tool.name), TOOL_SIGNATURE, 'missing-export', `which the manifest's tool ${tool.name} needs`);
  }
  for (const [name, what] of surfaceExports(manifest.data)) exportedFunction(name, TOOL_SIGNATURE, 'missing-export', what);

  const declared = manifest.data.deps.syscalls;
  for (const imp of signatures.imports) {
    const dotted = `${imp.module}.${imp.field}`;
    const isDeclared = Object.hasOwn(declared, dotted);
    if (imp.kind !== 'function') {
      problems.push({
        code: 'undeclared-import',
        message: `the image imports a ${imp.kind} ${dotted}; a host provides only host calls (functions)`,
        import: dotted,
      });
    } else if (!ABI_HOST_CALLS.has(dotted) && !isDeclared) {
      problems.push({
        code: 'undeclared-import',
        message: `the image imports ${dotted}, which is neither an ABI host call nor declared in deps.syscalls`,
        import: dotted,
      });
    } else if (!sameType(imp.type!, HOST_CALL)) {
      problems.push({
        code: 'bad-import-signature',
        message: `the host call ${dotted} is imported as ${formatType(imp.type!)}; every host call is ${formatType(HOST_CALL)}`,
        import: dotted,
      });
    }
  }
  for (const syscall of Object.keys(declared)) {
    if (!ABI_HOST_CALLS.has(syscall) && !DEFAULT_SYSCALLS.has(syscall) && !policy.servedSyscalls.has(syscall)) {
      problems.push({
        code: 'unserved-syscall',
        message: `the image declares syscall ${syscall}, which this bermd does not serve`,
        syscall,
      });
    }
  }
  return problems;
}
