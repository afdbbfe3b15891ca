// What a build refuses, each reported where it is written (file, line, column) with a message that
// says what to do. Two projects: one whose problems are found before code is generated (signatures
// and types), one whose code compiles but whose imports, events and secrets disagree with package.json;
// and the projects refused before anything compiles (no entry, a name that cannot name the image).
import { join } from 'node:path';
import { build, isGuestError, type Diagnostic } from '@berm/guest/build';
import { beforeAll, describe, expect, it } from 'vitest';
import { removeProject, writeProject } from './helpers/project.js';

const TYPES = `@json
class Args {
  x: i32 = 0;
}

class NotJson {
  x: i32 = 0;
}

@json
class WithSet {
  s: Set<string> = new Set<string>();
}

@json
class Chain {
  next: Chain | null = null;
}

@json
class IntKeys {
  m: Map<i32, string> = new Map<i32, string>();
}

export function two(a: Args, b: Args): void {}

export function plainParam(args: NotJson): void {}

export function setField(args: WithSet): void {}

export function chain(): Chain {
  return new Chain();
}

export function intKeys(): IntKeys {
  return new IntKeys();
}

export function text(name: string): void {}

/** @event */
class Loose {
  x: i32 = 0;
}

export function fine(): i32 {
  return 1;
}

export { helper } from "./helper";

@json
class Bytes {
  data: Uint8Array = new Uint8Array(0);
}

export function typedArray(args: Bytes): void {}

@json
class WithCallback {
  done: () => void = (): void => {};
}

export function callback(): WithCallback {
  return new WithCallback();
}

@json
class Sized {
  size: usize = 0;
}

export function sized(args: Sized): void {}

@json
class Offset {
  offset: isize = 0;
}

@json
class Nested {
  at!: Offset;
}

export function nested(args: Nested): void {}
`;

const IMPORTS = `import { emit, fetch } from "@berm/guest";

@json
class Plain {
  x: i32 = 0;
}

export function reach(): i32 {
  return fetch("https://api.example.com/", null).ok ? 1 : 0;
}

export function shout(): void {
  emit(new Plain());
}

export function token(): string {
  return "Bearer {secret:token}";
}

export function dice(): f64 {
  return Math.random();
}
`;

const IMPORTS_PACKAGE = `{
  "name": "imports",
  "berm": {
    "deps": {
      "syscalls": {
        "berm.http.proxy": ["x.example.com"]
      }
    }
  }
}
`;

/** The 1-based line of the first occurrence of `needle` in `text`, and its column. */
function at(text: string, needle: string): { line: number; column: number } {
  const offset = text.indexOf(needle);
  if (offset < 0) throw new Error(`${needle} is not in the source`);
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

async function failedBuild(files: Record<string, string | object>): Promise<{ diagnostics: Diagnostic[]; text: string }> {
  const dir = await writeProject(files);
  try {
    const error = await build({ dir }).catch((e: unknown) => e);
    if (!isGuestError(error) || error.code !== 'build-error') throw new Error(`expected a build error, got ${String(error)}`);
    return error.details as { diagnostics: Diagnostic[]; text: string };
  } finally {
    await removeProject(dir);
  }
}

function find(diagnostics: Diagnostic[], pattern: RegExp): Diagnostic {
  const found = diagnostics.filter((d) => pattern.test(d.message));
  if (found.length !== 1) throw new Error(`expected one diagnostic matching ${pattern}, got ${JSON.stringify(diagnostics, null, 2)}`);
  return found[0]!;
}

describe('signatures and types a tool or event cannot have', () => {
  let diagnostics: Diagnostic[];
  let text: string;

  beforeAll(async () => {
    ({ diagnostics, text } = await failedBuild({
      'package.json': { name: 'types' },
      'assembly/index.ts': TYPES,
      'assembly/helper.ts': 'export function helper(): i32 {\n  return 2;\n}\n',
    }));
  }, 180_000);

  it('a tool with two parameters, at its name', () => {
    expect(find(diagnostics, /tool two takes 2 parameters/)).toMatchObject({
      category: 'error',
      file: 'assembly/index.ts',
      ...at(TYPES, 'two('),
      message: "Transform 'berm': tool two takes 2 parameters; a tool takes none, or one @json class whose fields are its arguments",
    });
  });

  it('a parameter class that is not @json, a string parameter, at the parameter type', () => {
    expect(find(diagnostics, /tool plainParam:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'NotJson): void'),
      message: expect.stringContaining('NotJson is not marked @json'),
    });
    expect(find(diagnostics, /tool text:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'string): void'),
      message: expect.stringContaining('must be a @json class whose fields are its arguments, not string'),
    });
  });

  it('an unsupported field type, a map with non-string keys, a class that contains itself, at the type as written', () => {
    expect(find(diagnostics, /tool setField:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'Set<string> ='),
      message: expect.stringContaining('type Set<string> has no JSON form'),
    });
    expect(find(diagnostics, /tool intKeys:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'Map<i32, string> ='),
      message: expect.stringContaining("a map's keys must be strings"),
    });
    expect(find(diagnostics, /tool chain:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'Chain | null'),
      message: expect.stringContaining('class Chain contains itself (Chain → Chain)'),
    });
  });

  it('a typed array and a function, at the type as written, saying what to use', () => {
    const use = 'use bool, integers, f32/f64, string, Array<T>, Map<string, T>, T | null or a @json class';
    expect(find(diagnostics, /tool typedArray:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'Uint8Array ='),
      message: `Transform 'berm': tool typedArray: type Uint8Array has no JSON form: ${use}`,
    });
    expect(find(diagnostics, /tool callback:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, '() => void ='),
      message: `Transform 'berm': tool callback: type () => void has no JSON form (functions and host references cannot be sent): ${use}`,
    });
  });

  it('an isize or usize field of an argument, or of a class inside one, at its type: json-as would skip it', () => {
    expect(find(diagnostics, /tool sized:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'usize = 0'),
      message:
        "Transform 'berm': tool sized: an argument field cannot be usize: json-as skips one whose key comes out of declaration order; use u32, the same on wasm32",
    });
    expect(find(diagnostics, /tool nested:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'isize = 0'),
      message: expect.stringContaining(
        'an argument field cannot be isize: json-as skips one whose key comes out of declaration order; use i32',
      ),
    });
  });

  it('an @event class that is not @json, at its name', () => {
    expect(find(diagnostics, /event class Loose/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, 'Loose {'),
      message: expect.stringContaining('must be a @json class'),
    });
  });

  it('a re-export from another file, at its path: the glue could not call it', () => {
    expect(find(diagnostics, /re-exports/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(TYPES, '"./helper"'),
      message: expect.stringContaining('re-exports from ./helper; a tool must be a function of assembly/index.ts itself'),
    });
  });

  it('reports nothing else, and prints each as the compiler does, with file(line,column)', () => {
    expect(diagnostics).toHaveLength(12);
    expect(text).toContain(`└─ in assembly/index.ts(${at(TYPES, 'two(').line},${at(TYPES, 'two(').column})`);
  });
});

describe('imports, events and secrets that disagree with package.json', () => {
  let diagnostics: Diagnostic[];

  beforeAll(async () => {
    ({ diagnostics } = await failedBuild({ 'package.json': IMPORTS_PACKAGE, 'assembly/index.ts': IMPORTS }));
  }, 180_000);

  it('a declared syscall the code never makes, at its declaration in package.json', () => {
    expect(find(diagnostics, /declares the syscall berm\.http\.proxy/)).toMatchObject({
      file: 'package.json',
      ...at(IMPORTS_PACKAGE, '"berm.http.proxy"'),
      message: expect.stringContaining('but the code never makes it'),
    });
  });

  it('a syscall the code makes that package.json does not declare, at berm.deps.syscalls', () => {
    expect(find(diagnostics, /makes the syscall berm\.http\.fetch/)).toMatchObject({
      file: 'package.json',
      ...at(IMPORTS_PACKAGE, '"syscalls"'),
      message: expect.stringContaining('add it to berm.deps.syscalls'),
    });
  });

  it('emit of a class that is not an @event, at the class', () => {
    expect(find(diagnostics, /emit<Plain>/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(IMPORTS, 'Plain {'),
      message: expect.stringContaining('mark its class with an @event doc tag'),
    });
  });

  it('a {secret:NAME} that package.json does not declare, where it is written', () => {
    expect(find(diagnostics, /\{secret:token\}/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(IMPORTS, '{secret:token}'),
      message: expect.stringContaining('add "token" to berm.deps.secrets'),
    });
  });

  it('what a berm host cannot serve (Math.random imports env.seed)', () => {
    expect(find(diagnostics, /env\.seed/).message).toContain(
      'the harness uses Math.random (seeded by the host), which imports env.seed from the host',
    );
    expect(diagnostics).toHaveLength(5);
  });
});

describe('projects refused before anything compiles', () => {
  async function refusal(files: Record<string, string | object>): Promise<{ dir: string; error: Record<string, unknown> }> {
    const dir = await writeProject(files);
    try {
      const error = await build({ dir }).catch((e: unknown) => e);
      if (!isGuestError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
      return { dir, error: error.toJSON() };
    } finally {
      await removeProject(dir);
    }
  }

  it('a directory without assembly/index.ts (no-entry), saying what a harness needs', async () => {
    const { dir, error } = await refusal({ 'package.json': { name: 'empty' }, 'assembly/other.ts': 'export function f(): void {}\n' });
    expect(error).toEqual({
      code: 'no-entry',
      message: `${join(dir, 'assembly/index.ts')} does not exist: a harness's entry is assembly/index.ts (crab new NAME writes a project)`,
      dir,
    });
  });

  it('a package.json name that is not a harness name once its scope is off (bad-package-name), saying the rule', async () => {
    const { dir, error } = await refusal({ 'package.json': { name: '@acme/../x' }, 'assembly/index.ts': 'export function f(): void {}\n' });
    expect(error).toEqual({
      code: 'bad-package-name',
      message: `${join(dir, 'package.json')}: the name "@acme/../x" is not a harness name, and it names the image (build/<name>.wasm, without the scope): use 1 to 64 letters, digits, '_' or '-' (no dots, slashes or spaces), as in "weather" or "@acme/weather"`,
      file: join(dir, 'package.json'),
      name: '@acme/../x',
    });
  });
});
