/**
 * How the transform reports a problem: as the compiler's own diagnostic, so a harness's author reads it
 * where the compiler's errors are read, with the place it concerns (a source, or package.json).
 */
import { SourceKind } from 'assemblyscript';
import type { DiagnosticCategory, DiagnosticCode, Node, Parser, Program, Range, Source } from 'assemblyscript';

/**
 * DiagnosticCode.Transform_0_1, "Transform '{0}': {1}". A number, not the enum: the enum is a value of the
 * compiler's module, and the transform must not load a second copy of the compiler beside the one running.
 */
export const TRANSFORM_DIAGNOSTIC = 109 as DiagnosticCode;

/** DiagnosticCategory.Error, a number for the same reason. */
export const ERROR_CATEGORY = 3 as DiagnosticCategory;

/** The transform's name in its diagnostics: "Transform 'berm': ...". */
export const TRANSFORM_NAME = 'berm';

/** A project file that is not a source (package.json): its path, and its text (null when it is missing). */
export interface ProjectFile {
  path: string;
  text: string | null;
}

export class Diagnostics {
  /** The project files an error was reported in, each made a source once so the compiler can show its line. */
  private readonly files = new Map<string, Source>();

  constructor(private readonly program: Program) {}

  error(range: Range | null, message: string): void {
    this.program.error(TRANSFORM_DIAGNOSTIC, range, TRANSFORM_NAME, message);
  }

  /** An error at `length` characters from `start` of `source`. */
  errorAt(source: Source, start: number, length: number, message: string): void {
    const RangeClass = (source.range as Range).constructor as new (start: number, end: number) => Range;
    const range = new RangeClass(start, start + length);
    range.source = source;
    this.error(range, message);
  }

  /** An error at character `offset` of `file`, to the end of its line. */
  errorIn(file: ProjectFile, offset: number, message: string): void {
    const source = this.sourceOf(file);
    if (source === undefined) {
      this.error(null, `${file.path}: ${message}`);
      return;
    }
    const end = file.text === null ? 0 : Math.max(file.text.indexOf('\n', offset), offset + 1);
    this.errorAt(source, offset, Math.max(1, end - offset), message);
  }

  /** `file` as a source of the compiler's own class; undefined before the compiler holds any source to take it from. */
  private sourceOf(file: ProjectFile): Source | undefined {
    let source = this.files.get(file.path);
    if (source !== undefined) return source;
    const any = this.program.sources[0];
    if (any === undefined) return undefined;
    const SourceClass = any.constructor as new (kind: SourceKind, path: string, text: string) => Source;
    source = new SourceClass(SourceKind.User, file.path, file.text ?? '');
    this.files.set(file.path, source);
    return source;
  }
}

/** Where to report a problem with a declaration: its name, when it has one. */
export function nameRange(node: Node): Range {
  const named = node as Node & { name?: { range: Range } };
  return named.name?.range ?? node.range;
}

export function hasErrors(parser: Parser): boolean {
  return parser.diagnostics.some((d) => d.category === ERROR_CATEGORY);
}
