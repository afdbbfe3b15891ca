import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { isHarnessName, type ToolAnswerDocument } from '@berm/protocol';
import type { EmbeddedRuntime, Secrets } from 'bermd/runtime';
import { BaseCommand } from '../base-command.js';
import { callRefusal, TOOL_ERROR_EXIT_CODE, unknownTool } from '../call-answer.js';
import { stdoutPaint } from '../colour.js';
import { CliError } from '../failure.js';
import { renderToolAnswer } from '@berm/format/tool-answer';
import { inputError } from '../input.js';
import { buildProject } from '../project-build.js';
import { limitWireValues, runLimitFlags } from '../setting-flags.js';
import { toolArguments } from '../tool-args.js';

interface LoadedImage {
  name: string;
  bytes: Uint8Array;
}

export default class Run extends BaseCommand {
  static summary = "Run one tool of an image with bermd's runtime and limits, without a daemon.";
  static description =
    "Loads IMAGE (a .wasm file, or a project directory, built first as crab build does) as bermd would deploy it, with the same checks, limits, validators and host calls, calls TOOL once, and prints its result, then the events and log lines the call reported. ARGS are one JSON object, or key=value pairs typed by the tool's argument schema (a number field's value is a number, a boolean's true or false, an object's or an array's JSON, anything else text); they are checked before the tool runs, with the words bermd's /mcp uses. Nothing leaves the machine unless --serve allows it (berm.http.fetch, with --secrets FILE in bermd's secrets file format); berm.call reaches the programs given with --program NAME=IMAGE. With --json, prints {result, content, is_error, events, logs}, the document berm call prints for a deployed tool. Exits 1 when the tool answers an error or is stopped at a limit, 2 on a wrong tool, arguments or image.";
  static examples = [
    '<%= config.bin %> run examples/echo.wasm echo text=hello times=2',
    `<%= config.bin %> run weather forecast '{"city": "Oslo"}' --json`,
    '<%= config.bin %> run build/weather.wasm forecast city=Oslo --serve berm.http.fetch --secrets secrets.json',
    '<%= config.bin %> run build/trip.wasm plan city=Oslo --program weather=build/weather.wasm --call-timeout 2s',
  ];

  // ARGS are as many words as the call needs.
  static strict = false;

  static args = {
    image: Args.string({ description: 'a .wasm image, or a project directory to build first', required: true }),
    tool: Args.string({ description: 'the tool to call', required: true }),
    args: Args.string({ description: 'the arguments: one JSON object, or key=value pairs', required: false }),
  };

  static flags = {
    name: Flags.string({
      description:
        "the harness name it runs as, which its events and refusals name [default: the image's file name less .wasm, or the project's]",
      helpValue: 'NAME',
    }),
    ...runLimitFlags,
    serve: Flags.string({
      description:
        'serve this syscall to the guest (berm.http.fetch; repeatable); without it, a request is refused and nothing leaves the machine',
      helpValue: 'SYSCALL',
      multiple: true,
    }),
    secrets: Flags.string({ description: "the secrets a served syscall may use, in bermd's --secrets file format", helpValue: 'FILE' }),
    program: Flags.string({
      description:
        'a program berm.call may reach, by the name the image declares it with (repeatable): a .wasm image or a project directory',
      helpValue: 'NAME=IMAGE',
      multiple: true,
    }),
  };

  async run(): Promise<ToolAnswerDocument> {
    const { args, argv, flags } = await this.parse(Run);
    const words = (argv as string[]).slice(2);
    const quiet = this.jsonEnabled();
    const called = await this.image(args.image, flags.name, quiet);
    const programs: LoadedImage[] = [];
    for (const spec of flags.program ?? []) {
      const at = spec.indexOf('=');
      const name = spec.slice(0, at);
      if (at <= 0 || !isHarnessName(name))
        throw new CliError('usage', `--program ${spec}: give NAME=IMAGE, NAME a harness name the image declares in its deps.programs`, {
          program: spec,
        });
      programs.push(await this.image(spec.slice(at + 1), name, quiet));
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
      const manifest = await this.manifestOf(called.bytes);
      const tool = manifest.tools.find((t) => t.name === args.tool);
      if (tool === undefined)
        throw unknownTool(
          called.name,
          args.tool,
          manifest.tools.map((t) => t.name),
        );
      answer = await runtime.call(called.name, args.tool, toolArguments(words, tool.arguments));
    } catch (e) {
      const refused = e as { name?: string; code?: string; message: string; path?: string };
      if (refused.name === 'CallRefused' && typeof refused.code === 'string')
        throw callRefusal(refused.code, refused.message, refused.path);
      throw e;
    } finally {
      await runtime.close();
    }
    if (answer.is_error) this.answerNegatively(TOOL_ERROR_EXIT_CODE);
    if (!quiet) this.log(renderToolAnswer(answer, await stdoutPaint()));
    return answer;
  }

  private async manifestOf(bytes: Uint8Array) {
    const { Manifest } = await import('@berm/manifest');
    return Manifest.fromImage(bytes).data;
  }

  /** The image at `path`, built first when it is a project directory, and the name it runs as. */
  private async image(path: string, name: string | undefined, quiet: boolean): Promise<LoadedImage> {
    let isDir: boolean;
    try {
      isDir = (await stat(path)).isDirectory();
    } catch (e) {
      throw inputError(path, e);
    }
    if (isDir) {
      const { image, result } = await buildProject(path, { optimize: false, quiet });
      if (!quiet) process.stderr.write(`built ${image}\n`);
      return { name: name ?? result.name, bytes: result.bytes };
    }
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(path));
    } catch (e) {
      throw inputError(path, e);
    }
    const file = basename(path).replace(/\.wasm$/, '');
    const runAs = name ?? file;
    if (!isHarnessName(runAs))
      throw new CliError('usage', `'${file}' is not a harness name to run ${path} as (1 to 64 letters, digits, _ or -): give --name NAME`, {
        image: path,
      });
    return { name: runAs, bytes };
  }
}
