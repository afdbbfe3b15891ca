/**
 * What the compiled harness must agree with: the events it emits are its `@event` classes, its imports
 * are the ABI's host calls and the syscalls package.json declares (each declared one made), and the
 * secrets its code names are declared.
 */
import { ElementKind, SourceKind } from 'assemblyscript';
import type { Class, Function as AsFunction, Program } from 'assemblyscript';
import type { ContentKind, Deps, ToolSpec } from '@berm/manifest';
import { ABI_HOST_CALLS, ASK_SYSCALLS } from '@berm/protocol';
import type { Diagnostics, ProjectFile } from './diagnostics.js';
import type { ModuleImport } from './module.js';
import { offsetOf } from './project.js';
import { typeName } from './schema.js';

/** What a harness's imports of the `env` module come from, for the message that refuses them. */
const ENV_IMPORTS: Record<string, string> = {
  seed: 'Math.random (seeded by the host)',
  'Date.now': 'Date.now()',
  trace: 'trace()',
  'console.log': 'console.log()',
};

/** Every class a harness emits must be one of its `@event` classes (`events`). */
export function checkEmits(program: Program, events: ReadonlySet<Class>, diagnostics: Diagnostics): void {
  for (const [name, element] of program.instancesByName) {
    if (element.kind !== ElementKind.Function || !/\/@berm\/guest\/assembly\/index\/emit<.*>$/.test(name)) continue;
    const type = (element as AsFunction).typeArguments?.[0];
    const cls = type?.classReference ?? null;
    if (cls !== null && events.has(cls)) continue;
    const what = type === undefined ? '?' : typeName(program, type);
    const decl = cls?.prototype.declaration;
    diagnostics.error(decl?.name.range ?? null, `emit<${what}>: ${what} is not an event; mark its class with an @event doc tag`);
  }
}

/** What makes each syscall, for the message about one declared and never made. */
const MADE_BY: Record<string, string> = {
  'berm.http.fetch': 'fetch()',
  'berm.elicit': 'elicit()',
  'berm.sample': 'sample()',
};

/**
 * The syscalls that ask the calling client (berm.elicit, berm.sample) reach nothing an operator lists,
 * so they are declared with no strings: the build declares each one the code makes, and refuses one
 * package.json declares with strings, at its declaration.
 */
export function declareAskSyscalls(imports: readonly ModuleImport[], deps: Deps, packageJson: ProjectFile, diagnostics: Diagnostics): void {
  const text = packageJson.text ?? '';
  for (const syscall of ASK_SYSCALLS) {
    const reach = deps.syscalls[syscall];
    if (reach !== undefined && reach.length > 0) {
      diagnostics.errorIn(
        packageJson,
        offsetOf(text, ['berm', 'deps', 'syscalls', syscall]),
        `berm.deps.syscalls declares ${syscall} with ${JSON.stringify(reach)}; it reaches only the client making the call and takes no strings: write [] (or leave it out, the build declares it when the code makes it)`,
      );
    }
    if (reach === undefined && imports.some((imp) => `${imp.module}.${imp.field}` === syscall)) deps.syscalls[syscall] = [];
  }
}

/** Imports beyond the ABI's own host calls must be syscalls package.json declares, and each declared syscall must be imported. */
export function checkImports(imports: readonly ModuleImport[], deps: Deps, packageJson: ProjectFile, diagnostics: Diagnostics): void {
  const declared = deps.syscalls;
  const text = packageJson.text ?? '';
  const imported = new Set<string>();
  for (const imp of imports) {
    const dotted = `${imp.module}.${imp.field}`;
    imported.add(dotted);
    if (ABI_HOST_CALLS.has(dotted) || Object.hasOwn(declared, dotted)) continue;
    if (imp.module === 'env') {
      const from = ENV_IMPORTS[imp.field] ?? `${imp.field} (${imp.internal})`;
      diagnostics.error(
        null,
        `the harness uses ${from}, which imports ${dotted} from the host; a berm host serves only its host calls, so it cannot be used in a harness`,
      );
    } else {
      diagnostics.errorIn(
        packageJson,
        offsetOf(text, ['berm', 'deps', 'syscalls']),
        `the code makes the syscall ${dotted} (imported by ${imp.internal}), which package.json does not declare: add it to berm.deps.syscalls with what it reaches, e.g. "${dotted}": ["api.example.com"]`,
      );
    }
  }
  for (const syscall of Object.keys(declared)) {
    if (!imported.has(syscall)) {
      diagnostics.errorIn(
        packageJson,
        offsetOf(text, ['berm', 'deps', 'syscalls', syscall]),
        `package.json declares the syscall ${syscall} in berm.deps.syscalls, but the code never makes it; remove it, or call what makes it${Object.hasOwn(MADE_BY, syscall) ? ` (${MADE_BY[syscall]})` : ''}`,
      );
    }
  }
}

/** A `{secret:NAME}` written in the harness's code must name a secret package.json declares. */
export function checkSecrets(program: Program, secrets: readonly string[], diagnostics: Diagnostics): void {
  const declared = new Set(secrets);
  for (const source of program.sources) {
    if (source.sourceKind !== SourceKind.User && source.sourceKind !== SourceKind.UserEntry) continue;
    for (const match of source.text.matchAll(/\{secret:([^}\s"'`]+)\}/g)) {
      if (declared.has(match[1]!)) continue;
      diagnostics.errorAt(
        source,
        match.index!,
        match[0].length,
        `${match[0]} names a secret package.json does not declare; add "${match[1]}" to berm.deps.secrets (the host refuses an undeclared secret)`,
      );
    }
  }
}

/** The content kind each method of the library's `Content` adds. */
const CONTENT_METHODS: Record<string, ContentKind> = {
  text: 'text',
  image: 'image',
  audio: 'audio',
  resourceLink: 'resource_link',
  resource: 'resource',
  resourceBlob: 'resource',
};

/**
 * A content block the code adds must be of a kind some tool declares with `@content`: the host would
 * refuse it at every call (bad-content). Reported where the code first adds one, as near as a scan of
 * the harness's files finds it.
 */
export function checkContent(program: Program, tools: readonly ToolSpec[], diagnostics: Diagnostics): void {
  const declared = new Set(tools.flatMap((t) => t.content ?? []));
  for (const name of program.instancesByName.keys()) {
    const method = /\/@berm\/guest\/assembly\/content\/Content#(\w+)$/.exec(name)?.[1];
    const kind = method === undefined || !Object.hasOwn(CONTENT_METHODS, method) ? undefined : CONTENT_METHODS[method];
    if (kind === undefined || declared.has(kind)) continue;
    const message = `the code adds ${kind} content (content.${method}()), and no tool declares it: add "@content ${kind}" to the doc comment of the tool that answers it`;
    const place = firstUse(program, method!);
    if (place === null) diagnostics.error(null, message);
    else diagnostics.errorAt(place.source, place.at, method!.length, message);
  }
}

function firstUse(program: Program, method: string): { source: Program['sources'][number]; at: number } | null {
  const pattern = new RegExp(`\\.${method}\\s*\\(`);
  for (const source of program.sources) {
    if (source.sourceKind !== SourceKind.User && source.sourceKind !== SourceKind.UserEntry) continue;
    const found = pattern.exec(source.text);
    if (found !== null) return { source, at: found.index + 1 };
  }
  return null;
}
