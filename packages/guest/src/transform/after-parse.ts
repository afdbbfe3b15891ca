/**
 * The transform's afterParse: reads the project (package.json, README.md), adds ~lib/berm_abort (the
 * program's `abort`), and parses the entry again with each tool's glue appended.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeKind, SourceKind } from 'assemblyscript';
import type { Parser, Program, Source } from 'assemblyscript';
import { type Diagnostics, hasErrors, type ProjectFile } from './diagnostics.js';
import { PACKAGE_JSON, readProject, type Project, type ProjectProblem } from './project.js';
import { findTools, glueFor, type ToolDecl, type ToolProblem } from './tools.js';

const here = dirname(fileURLToPath(import.meta.url));
/** ~lib/berm_abort: the guest library's assembly/abort.ts, shipped beside this transform. */
const ABORT_SOURCE = join(here, '..', '..', 'assembly', 'abort.ts');

/** What the compiler gives a transform that afterParse reads. */
export interface ParseContext {
  readonly program: Program;
  readonly baseDir: string;
  readonly readFile: (filename: string, baseDir: string) => string | null | Promise<string | null>;
}

/** What afterParse learns of the harness. */
export interface ParsedHarness {
  project: Project;
  packageJson: ProjectFile;
  /** The harness's entry as parsed with its glue (as first parsed when that parse failed); null when there is none. */
  entry: Source | null;
  /** The entry's tools, declared as in `entry`. */
  tools: ToolDecl[];
  /**
   * Problems with the tools' declarations, reported after initialisation: an error now would stop the
   * build as a parse error, before the types of the other tools are checked.
   */
  toolProblems: ToolProblem[];
}

export async function parseHarness(context: ParseContext, parser: Parser, diagnostics: Diagnostics): Promise<ParsedHarness> {
  const packageJson: ProjectFile = { path: PACKAGE_JSON, text: await context.readFile(PACKAGE_JSON, context.baseDir) };
  const readme = await context.readFile('README.md', context.baseDir);
  const problems: ProjectProblem[] = [];
  const project = readProject(packageJson.text, readme, problems);
  for (const problem of problems) diagnostics.errorIn(packageJson, problem.offset, problem.message);

  // The program's `abort` is ~lib/berm_abort's: a library entry file's exports are globals.
  parser.parseFile(readFileSync(ABORT_SOURCE, 'utf8'), '~lib/berm_abort.ts', false);
  const aliases = (context.program.options.globalAliases ??= new Map<string, string>());
  aliases.set('abort', '__berm_abort');

  // The compiler parses its runtime as an entry too (~lib/rt/index-incremental); the harness's is the one outside ~lib.
  const entries = parser.sources.filter((s) => s.sourceKind === SourceKind.UserEntry && !s.internalPath.startsWith('~lib/'));
  const first = entries.find((s) => s.internalPath === 'assembly/index') ?? entries[0];
  if (first === undefined) return { project, packageJson, entry: null, tools: [], toolProblems: [] };
  // The entry is parsed again only when it parsed cleanly: otherwise its errors would be reported twice.
  const parsed = !hasErrors(parser);
  const toolProblems: ToolProblem[] = [];
  const tools = findTools(first, toolProblems);
  if (!parsed) return { project, packageJson, entry: first, tools: [], toolProblems };
  // Parsed again with its glue, under the same path: the first parse is dropped.
  parser.sources.splice(parser.sources.indexOf(first), 1);
  parser.donelog.delete(first.internalPath);
  parser.parseFile(first.text + glueFor(tools), first.normalizedPath, true);
  const entry = parser.sources[parser.sources.length - 1]!;
  return { project, packageJson, entry, tools: tools.map((t) => ({ ...t, decl: redeclared(entry, t) })), toolProblems };
}

/** The declaration of `tool` in the entry parsed with its glue. */
function redeclared(entry: Source, tool: ToolDecl): ToolDecl['decl'] {
  for (const statement of entry.statements) {
    if (statement.kind === NodeKind.FunctionDeclaration && (statement as ToolDecl['decl']).name.text === tool.local)
      return statement as ToolDecl['decl'];
  }
  return tool.decl;
}
