import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { daemonFlags } from '../daemon-flags.js';
import { call } from '../actions/call.js';

export default class Call extends BaseCommand {
  static summary = "Call a deployed tool through bermd's /mcp and print its answer, events and log lines.";
  static description =
    "Calls HARNESS.TOOL (the name bermd lists it by; HARNESS TOOL as two words is joined with bermd's default separator, a dot) as one 2026-07-28 MCP request, and prints the result, or the tool's error, then the events and log lines the call reported. ARGS are one JSON object, or key=value pairs typed by the tool's argument schema, as crab run takes them; bermd checks them before the tool runs. With --json, prints {result, content, is_error, events, logs}, the document crab run prints for the same image. A call bermd refuses (no such tool or harness, arguments that do not fit, a limit that stopped it) is a failure with bermd's code. Exits 1 when the tool answers an error or is stopped, 2 on a wrong tool or arguments, 3 when bermd cannot be reached.";
  static examples = [
    '<%= config.bin %> call echo.echo text=hello times=2',
    `<%= config.bin %> call weather forecast '{"city": "Oslo"}' --json`,
    'BERM_URL=http://127.0.0.1:9000 BERM_TOKEN=... <%= config.bin %> call weather.forecast city=Oslo',
  ];

  static strict = false;

  static args = {
    name: Args.string({ description: 'the tool, as bermd lists it: HARNESS.TOOL (or HARNESS, then TOOL)', required: true }),
    args: Args.string({ description: 'the arguments: one JSON object, or key=value pairs', required: false, ignoreStdin: true }),
  };

  static flags = {
    ...daemonFlags,
    'idempotency-key': Flags.string({
      description:
        'the call\'s idempotency key, sent as _meta["io.berm/idempotency-key"]: a second call of an external_write tool with the same key and arguments is answered from its receipt, the tool not run again',
      helpValue: 'K',
    }),
  };

  async run() {
    return this.act(await this.parse(Call), call);
  }
}
