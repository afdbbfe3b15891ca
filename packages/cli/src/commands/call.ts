import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { IDEMPOTENCY_KEY_META, isCallRefusal, REPLAYED_META, type ToolAnswerDocument, type ToolContent } from '@berm/protocol';
import { BaseCommand } from '../base-command.js';
import { callRefusal, TOOL_ERROR_EXIT_CODE, unknownTool } from '../call-answer.js';
import { stdoutPaint } from '../colour.js';
import { daemonFlags } from '../daemon.js';
import { CliError } from '../failure.js';
import { renderToolAnswer } from '@berm/format/tool-answer';
import { isUnknownToolAnswer, type ListedTool, type McpCall, openMcpCall } from '../mcp-call.js';
import { needsSchema, toolArguments } from '../tool-args.js';

/** A tool's name as a word of its own (`berm call echo echo`), told from ARGS, which are JSON or key=value. */
const TOOL_WORD = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** bermd's default `--tool-separator`, which joins `HARNESS TOOL` given as two words. */
const SEPARATOR = '.';

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
    args: Args.string({ description: 'the arguments: one JSON object, or key=value pairs', required: false }),
  };

  static flags = {
    ...daemonFlags,
    'idempotency-key': Flags.string({
      description:
        'the call\'s idempotency key, sent as _meta["io.berm/idempotency-key"]: a second call of an external_write tool with the same key and arguments is answered from its receipt, the tool not run again',
      helpValue: 'K',
    }),
  };

  async run(): Promise<ToolAnswerDocument> {
    const { argv, flags } = await this.parse(Call);
    const words = argv as string[];
    let name = words[0]!;
    let rest = words.slice(1);
    if (!name.includes(SEPARATOR) && rest.length > 0 && TOOL_WORD.test(rest[0]!)) {
      name = `${name}${SEPARATOR}${rest[0]}`;
      rest = rest.slice(1);
    }
    const at = name.indexOf(SEPARATOR);
    const harness = at === -1 ? name : name.slice(0, at);
    const tool = at === -1 ? '' : name.slice(at + SEPARATOR.length);
    if (tool === '')
      throw new CliError(
        'usage',
        `${name}: name the tool as HARNESS${SEPARATOR}TOOL, or as HARNESS TOOL; see '${this.helpCommand} --help'`,
        {
          name,
        },
      );
    const { url, token } = await this.bearer(flags);
    const mcp = await openMcpCall(url, token);
    let answer: ToolAnswerDocument;
    try {
      let schema: unknown;
      if (needsSchema(rest)) {
        const listed = (await mcp.tools()).find((t) => t.name === name);
        if (listed === undefined) throw await this.notListed(mcp, url, harness, tool);
        schema = listed.inputSchema;
      }
      answer = await this.call(mcp, url, name, harness, tool, toolArguments(rest, schema), flags['idempotency-key']);
    } finally {
      await mcp.close();
    }
    if (answer.is_error) this.answerNegatively(TOOL_ERROR_EXIT_CODE);
    if (!this.jsonEnabled()) this.log(renderToolAnswer(answer, await stdoutPaint()));
    return answer;
  }

  private async call(
    mcp: McpCall,
    url: string,
    name: string,
    harness: string,
    tool: string,
    args: Record<string, unknown>,
    key: string | undefined,
  ): Promise<ToolAnswerDocument> {
    let answered: Awaited<ReturnType<McpCall['call']>>;
    try {
      answered = await mcp.call(name, args, key === undefined ? {} : { [IDEMPOTENCY_KEY_META]: key });
    } catch (e) {
      // bermd answers a name it does not list as invalid params, deployed or not: its list says which.
      if (isUnknownToolAnswer(e)) throw await this.notListed(mcp, url, harness, tool);
      throw e;
    }
    const { result, events, logs } = answered;
    const content = result.content as ToolContent[];
    const failed = result._meta?.['berm/error'] as { code?: unknown; path?: unknown } | undefined;
    if (result.isError === true && typeof failed?.code === 'string' && isCallRefusal(failed.code)) {
      const text = content.find((c) => c.type === 'text')?.text;
      throw callRefusal(
        failed.code,
        typeof text === 'string' ? text : failed.code,
        typeof failed.path === 'string' ? failed.path : undefined,
      );
    }
    const document: ToolAnswerDocument = {
      result: result.structuredContent ?? null,
      content,
      is_error: result.isError === true,
      events,
      logs,
    };
    const given = result._meta?.[IDEMPOTENCY_KEY_META];
    if (typeof given === 'string') document.idempotency_key = given;
    if (result._meta?.[REPLAYED_META] === true) document.replayed = true;
    return document;
  }

  /** Why `harness`'s `tool` is not listed: the harness has no such tool, or no such harness is deployed (or callable with this token). */
  private async notListed(mcp: McpCall, url: string, harness: string, tool: string): Promise<CliError> {
    const prefix = `${harness}${SEPARATOR}`;
    const tools = (await mcp.tools()).filter((t: ListedTool) => t.name.startsWith(prefix)).map((t) => t.name.slice(prefix.length));
    if (tools.length > 0) return unknownTool(harness, tool, tools);
    return new CliError(
      'not-found',
      `no harness named ${harness} is deployed at ${url} (or the token may not call it): berm ls lists what is, crab deploy deploys it`,
      { harness, url },
    );
  }
}
