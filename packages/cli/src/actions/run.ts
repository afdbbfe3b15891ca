import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { isHarnessName, type ToolAnswerDocument } from '@berm/protocol';
import type { EmbeddedRuntime, Secrets } from 'bermd/runtime';
import { type StartedWorkers, startWorkers } from 'bermd/runtime/workers';
import type { CommandContext, Parsed } from '../context.js';
import { callRefusal, TOOL_ERROR_EXIT_CODE, unknownTool } from '../call-answer.js';
import { stdoutPaint } from '../colour.js';
import { CliError } from '../failure.js';
import { renderToolAnswer } from '@berm/format/tool-answer';
import { fileError } from '../file-error.js';
import { limitWireValues } from '../limit-values.js';
import { toolArguments } from '../tool-args.js';

interface LoadedImage {
  name: string;
  bytes: Uint8Array;
}

export interface RunFlags {
  name?: string;
  serve?: string[];
  secrets?: string;
  program?: string[];
  /** The run's limits (limit-values.ts), by their settings' flag names. */
  [limit: string]: unknown;
}

export async function runTool(parsed: Parsed<{ image: string; tool: string }, RunFlags>, ctx: CommandContext): Promise<ToolAnswerDocument> {
  // With no syscall served, the call runs on this thread (the runtime's `inline`): a worker's start would
  // cost more than the call, in a process that runs one. A call that reaches a syscall still runs on a
  // worker (the refusal it gets is given from this thread while the guest waits), started when it comes.
  // With a syscall served, the worker starts first, before the runtime is imported and the image admitted,
  // so that its start runs on another core meanwhile; the runtime takes it as its own, and it is ended
  // here when the run stops before that.
  if ((parsed.flags.serve ?? []).length === 0) return runOn(undefined, parsed, ctx);
  const workers = startWorkers(1);
  try {
    return await runOn(workers, parsed, ctx);
  } finally {
    await workers.terminate();
  }
}

async function runOn(
  workers: StartedWorkers | undefined,
  { args, argv, flags }: Parsed<{ image: string; tool: string }, RunFlags>,
  ctx: CommandContext,
): Promise<ToolAnswerDocument> {
  const words = argv.slice(2);
  const quiet = ctx.json;
  // Loaded (chalk, unless NO_COLOR) while the image is read and the runtime loaded, not after the call.
  const painting = quiet ? undefined : stdoutPaint();
  painting?.catch(() => undefined);
  const called = await loadImage(args.image, flags.name, quiet);
  const programs: LoadedImage[] = [];
  for (const spec of flags.program ?? []) {
    const at = spec.indexOf('=');
    const name = spec.slice(0, at);
    if (at <= 0 || !isHarnessName(name))
      throw new CliError('usage', `--program ${spec}: give NAME=IMAGE, NAME a harness name the image declares in its deps.programs`, {
        program: spec,
      });
    programs.push(await loadImage(spec.slice(at + 1), name, quiet));
  }
  const runtimeEntry = await import('bermd/runtime');
  let secrets: Secrets | undefined;
  if (flags.secrets !== undefined) {
    try {
      secrets = await runtimeEntry.Secrets.load(flags.secrets);
    } catch (e) {
      throw new CliError('bad-secrets-file', `--secrets ${flags.secrets}: ${(e as Error).message}`, { file: flags.secrets });
    }
  }
  let runtime: EmbeddedRuntime;
  try {
    runtime = await runtimeEntry.EmbeddedRuntime.open([called, ...programs], {
      limits: limitWireValues(flags),
      serve: flags.serve,
      secrets,
      workers,
      inline: workers === undefined,
    });
  } catch (e) {
    // A refusal of an image is the one a deploy would give: its code and words, and which image.
    if (runtimeEntry.isBermdError(e)) {
      const at = (flags.program ?? []).find((spec) => spec.startsWith(`${e.details.harness}=`));
      const image = at === undefined ? args.image : at.slice(at.indexOf('=') + 1);
      throw new CliError(e.code, `cannot run '${image}': ${e.message}`, { ...e.details, image });
    }
    throw e;
  }
  let answer: ToolAnswerDocument;
  try {
    const { tools } = runtime.manifest(called.name)!;
    const tool = tools.find((t) => t.name === args.tool);
    if (tool === undefined)
      throw unknownTool(
        called.name,
        args.tool,
        tools.map((t) => t.name),
      );
    answer = await runtime.call(called.name, args.tool, toolArguments(words, tool.arguments));
  } catch (e) {
    const refused = e as { name?: string; code?: string; message: string; path?: string };
    if (refused.name === 'CallRefused' && typeof refused.code === 'string') throw callRefusal(refused.code, refused.message, refused.path);
    throw e;
  } finally {
    await runtime.close();
  }
  if (answer.is_error) ctx.answerNegatively(TOOL_ERROR_EXIT_CODE);
  if (painting !== undefined) ctx.log(renderToolAnswer(answer, await painting));
  return answer;
}

/** The image at `path`, built first when it is a project directory, and the name it runs as. */
async function loadImage(path: string, name: string | undefined, quiet: boolean): Promise<LoadedImage> {
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (e) {
    throw fileError(path, e);
  }
  if (isDir) {
    const { buildProject } = await import('../project-build.js');
    const { image, result } = await buildProject(path, { optimize: false, quiet });
    if (!quiet) process.stderr.write(`built ${image}\n`);
    return { name: name ?? result.name, bytes: result.bytes };
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    throw fileError(path, e);
  }
  const file = basename(path).replace(/\.wasm$/, '');
  const runAs = name ?? file;
  if (!isHarnessName(runAs))
    throw new CliError('usage', `'${file}' is not a harness name to run ${path} as (1 to 64 letters, digits, _ or -): give --name NAME`, {
      image: path,
    });
  return { name: runAs, bytes };
}
