/**
 * Reads the function signatures of a module's imports and exports.
 *
 * `WebAssembly.Module.exports()`/`imports()` give names and kinds but no types, and the ABI is a
 * contract on types (`berm_tool_T(i32,i32)->i64`, host calls `(i32,i32)->i64`): a wrong signature
 * compiles fine and fails only when called. So the type, import, function and export sections are
 * walked here. It runs after `WebAssembly.compile` accepted the module, so a structure it does not
 * know is a feature it does not model, not a malformed file.
 */
import { isManifestError, moduleSections, readU64 } from '@berm/manifest';

export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'funcref' | 'externref';

export interface FuncType {
  params: ValType[];
  results: ValType[];
}

export type ExternKind = 'function' | 'table' | 'memory' | 'global' | 'tag';

export interface ImportEntry {
  module: string;
  field: string;
  kind: ExternKind;
  /** Present for function imports. */
  type?: FuncType;
}

export interface ExportEntry {
  name: string;
  kind: ExternKind;
  /** Present for function exports. */
  type?: FuncType;
}

export interface ModuleSignatures {
  imports: ImportEntry[];
  exports: ExportEntry[];
}

export class SignatureReadError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`${message} (at byte ${offset})`);
    this.name = 'SignatureReadError';
    this.offset = offset;
  }
}

const VALTYPES: Record<number, ValType> = {
  0x7f: 'i32',
  0x7e: 'i64',
  0x7d: 'f32',
  0x7c: 'f64',
  0x7b: 'v128',
  0x70: 'funcref',
  0x6f: 'externref',
};
const KINDS: ExternKind[] = ['function', 'table', 'memory', 'global', 'tag'];
const decoder = new TextDecoder('utf-8', { fatal: true });

class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }

  byte(): number {
    if (this.pos >= this.end) throw new SignatureReadError('unexpected end of section', this.pos);
    return this.bytes[this.pos++]!;
  }

  /** Unsigned LEB128 up to 10 bytes, so memory64 limits read too; values past 2^53 never occur in the fields kept. */
  uleb(): number {
    const { value, next } = readU64(this.bytes, this.pos, this.end);
    this.pos = next;
    return value;
  }

  name(): string {
    const len = this.uleb();
    const start = this.pos;
    if (start + len > this.end) throw new SignatureReadError('name runs past its section', start);
    this.pos += len;
    return decoder.decode(this.bytes.subarray(start, start + len));
  }

  valtype(): ValType {
    const at = this.pos;
    const t = VALTYPES[this.byte()];
    if (t === undefined) throw new SignatureReadError(`value type 0x${this.bytes[at]!.toString(16)} is not supported`, at);
    return t;
  }

  limits(): void {
    const flags = this.byte();
    this.uleb();
    if (flags & 0x01) this.uleb();
  }
}

/**
 * The signatures of the imports and exports of the module `bytes`. Throws `SignatureReadError` for
 * a structure it does not model, and for bytes it cannot frame.
 */
export function readSignatures(bytes: Uint8Array): ModuleSignatures {
  try {
    return walkSections(bytes);
  } catch (e) {
    // Frames and LEB128 integers are read by @berm/manifest, which refuses in its own terms;
    // the deploy checks answer a SignatureReadError, so that is what leaves here.
    if (isManifestError(e)) throw new SignatureReadError(e.message, e.offset ?? 0);
    throw e;
  }
}

function walkSections(bytes: Uint8Array): ModuleSignatures {
  const types: FuncType[] = [];
  const funcTypes: number[] = [];
  const imports: ImportEntry[] = [];
  const rawExports: { name: string; kind: ExternKind; index: number }[] = [];

  for (const { id, bodyStart, bodyEnd } of moduleSections(bytes)) {
    const r = new Reader(bytes, bodyStart, bodyEnd);
    if (id === 1) {
      for (let n = r.uleb(); n > 0; n--) {
        const at = r.pos;
        const form = r.byte();
        if (form !== 0x60) throw new SignatureReadError(`type form 0x${form.toString(16)} is not supported`, at);
        const params: ValType[] = [];
        for (let p = r.uleb(); p > 0; p--) params.push(r.valtype());
        const results: ValType[] = [];
        for (let q = r.uleb(); q > 0; q--) results.push(r.valtype());
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = r.uleb(); n > 0; n--) {
        const module = r.name();
        const field = r.name();
        const at = r.pos;
        const kind = KINDS[r.byte()];
        if (kind === undefined) throw new SignatureReadError('unknown import kind', at);
        if (kind === 'function') {
          const typeIndex = r.uleb();
          funcTypes.push(typeIndex);
          imports.push({ module, field, kind, type: typeAt(types, typeIndex, at) });
        } else {
          if (kind === 'table') {
            r.byte();
            r.limits();
          } else if (kind === 'memory') r.limits();
          else if (kind === 'global') {
            r.valtype();
            r.byte();
          } else {
            r.byte();
            r.uleb();
          }
          imports.push({ module, field, kind });
        }
      }
    } else if (id === 3) {
      for (let n = r.uleb(); n > 0; n--) funcTypes.push(r.uleb());
    } else if (id === 7) {
      for (let n = r.uleb(); n > 0; n--) {
        const name = r.name();
        const at = r.pos;
        const kind = KINDS[r.byte()];
        if (kind === undefined) throw new SignatureReadError('unknown export kind', at);
        rawExports.push({ name, kind, index: r.uleb() });
      }
    }
  }

  const exports = rawExports.map(({ name, kind, index }): ExportEntry => {
    if (kind !== 'function') return { name, kind };
    const typeIndex = funcTypes[index];
    if (typeIndex === undefined) throw new SignatureReadError(`export ${name} names function ${index}, which does not exist`, 0);
    return { name, kind, type: typeAt(types, typeIndex, 0) };
  });
  return { imports, exports };
}

function typeAt(types: FuncType[], index: number, offset: number): FuncType {
  const t = types[index];
  if (t === undefined) throw new SignatureReadError(`type index ${index} does not exist`, offset);
  return t;
}

export function formatType(t: FuncType): string {
  const results = t.results.length === 1 ? t.results[0] : `(${t.results.join(',')})`;
  return `(${t.params.join(',')})->${results}`;
}

export function sameType(a: FuncType, b: FuncType): boolean {
  return (
    a.params.length === b.params.length &&
    a.results.length === b.results.length &&
    a.params.every((p, i) => p === b.params[i]) &&
    a.results.every((q, i) => q === b.results[i])
  );
}
