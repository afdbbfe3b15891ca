/**
 * A guest's `berm.log` line as MCP's logging carries it to a client: a `notifications/message` whose
 * `logger` is the harness that wrote it and whose `data` is `{tool, level, message}`, sent to the call
 * that wrote it when the client's level (a 2025 session's `logging/setLevel`, a 2026-07-28 request's
 * `_meta` level) lets it through. Kept apart from the call so that logging to the client at its level
 * can grow beyond a call's own lines without touching how a call runs.
 */
import type { LoggingLevel, LoggingMessageNotification } from '@modelcontextprotocol/server';

/** A guest may write the two aliases Rust and JS loggers use; MCP knows the RFC 5424 name beside each. */
const MCP_LEVEL: Readonly<Record<string, LoggingLevel>> = { trace: 'debug', warn: 'warning' };

/** The MCP level of a `berm.log` level (the host refused any other before the line got here). */
export function mcpLevelOf(level: string): LoggingLevel {
  return MCP_LEVEL[level] ?? (level as LoggingLevel);
}

/** One log line as the notification's params; `data.level` keeps the level the guest wrote, which MCP's may rename. */
export function guestLogMessage(line: {
  harness: string;
  tool: string;
  level: string;
  message: string;
}): LoggingMessageNotification['params'] {
  return { level: mcpLevelOf(line.level), logger: line.harness, data: { tool: line.tool, level: line.level, message: line.message } };
}
