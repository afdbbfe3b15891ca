import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { runTool } from '../actions/run.js';
import { runLimitFlags } from '../setting-flags.js';

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
    args: Args.string({ description: 'the arguments: one JSON object, or key=value pairs', required: false, ignoreStdin: true }),
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

  async run() {
    return this.act(await this.parse(Run), runTool);
  }
}
