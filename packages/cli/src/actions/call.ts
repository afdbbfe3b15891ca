import { IDEMPOTENCY_KEY_META, isCallRefusal, REPLAYED_META, type ToolAnswerDocument, type ToolContent } from '@berm/protocol';
import { callRefusal, TOOL_ERROR_EXIT_CODE, unknownTool } from '../call-answer.js';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { renderToolAnswer } from '@berm/format/tool-answer';
import type { ListedTool, McpCall } from '../mcp-call.js';
import { needsSchema, toolArguments } from '../tool-args.js';

/** A tool's name as a word of its own (`berm call echo echo`), told from ARGS, which are JSON or key=value. */
const TOOL_WORD = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** bermd's default `--tool-separator`, which joins `HARNESS TOOL` given as two words. */
const SEPARATOR = '.';

export interface CallFlags {
  url?: string;
  token?: string;
  'idempotency-key'?: string;
}

export async function call({ argv, flags }: Parsed<unknown, CallFlags>, ctx: CommandContext): Promise<ToolAnswerDocument> {
  const words = argv;
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
    throw new CliError('usage', `${name}: name the tool as HARNESS${SEPARATOR}TOOL, or as HARNESS TOOL; see '${ctx.helpCommand} --help'`, {
      name,
    });
  const { url, token } = await ctx.bearer(flags);
  // Loaded here rather than at the top, so that what the MCP client costs to load is its own.
  const { openMcpCall } = await import('../mcp-call.js');
  const mcp = await openMcpCall(url, token);
  let answer: ToolAnswerDocument;
  try {
    let schema: unknown;
    if (needsSchema(rest)) {
      const listed = (await mcp.tools()).find((t) => t.name === name);
      if (listed === undefined) throw await notListed(mcp, url, harness, tool);
      schema = listed.inputSchema;
    }
    answer = await callTool(mcp, url, name, harness, tool, toolArguments(rest, schema), flags['idempotency-key']);
  } finally {
    await mcp.close();
  }
  if (answer.is_error) ctx.answerNegatively(TOOL_ERROR_EXIT_CODE);
  if (!ctx.json) ctx.log(renderToolAnswer(answer, await stdoutPaint()));
  return answer;
}

async function callTool(
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
    const { isUnknownToolAnswer } = await import('../mcp-call.js');
    if (isUnknownToolAnswer(e)) throw await notListed(mcp, url, harness, tool);
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
async function notListed(mcp: McpCall, url: string, harness: string, tool: string): Promise<CliError> {
  const prefix = `${harness}${SEPARATOR}`;
  const tools = (await mcp.tools()).filter((t: ListedTool) => t.name.startsWith(prefix)).map((t) => t.name.slice(prefix.length));
  if (tools.length > 0) return unknownTool(harness, tool, tools);
  return new CliError(
    'not-found',
    `no harness named ${harness} is deployed at ${url} (or the token may not call it): berm ls lists what is, crab deploy deploys it`,
    { harness, url },
  );
}
