/**
 * The host calls a guest can import, keyed by dotted name (`module.field`, spec §4). Each one takes the
 * parsed JSON request and answers an envelope; the worker does the memory plumbing around it.
 *
 * The ABI's own three are served here. A syscall beyond the ABI plugs in as one more entry: the HTTP
 * syscalls' entries forward the request to the main thread (http-fetch.ts), where the runner's
 * `hostServices` serve it. Which syscalls a daemon serves is the operator's choice (`--serve`), which the
 * deploy checks enforce; a guest importing a name absent from this table is never instantiated.
 */
// The resources module alone: this table loads in every worker, where the rest of the library (its
// generated validator, the break rules) would only lengthen each worker's start.
import { matchTemplate, parseTemplate } from '@berm/manifest/resources';
import { HOST_CALL, RESOURCE_UPDATED } from '@berm/protocol';
import { notPermitted } from './errors.js';
import { nestedKey } from './idempotency-key.js';
import { isPlainObject } from './guest-memory.js';
import type { HostCall, HostCallContext, HostEnvelope } from './host-call.js';
import { ASK_HOST_CALLS, ASYNC_HOST_CALLS, forwardedHostCall } from './http-fetch.js';

/** Log levels a guest may use: MCP's (RFC 5424 names) and the two aliases Rust and JS loggers write. */
export const LOG_LEVELS: ReadonlySet<string> = new Set([
  'trace',
  'debug',
  'info',
  'notice',
  'warn',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);

const refused = (message: string): HostEnvelope => ({ refused: message });

/**
 * `berm.call`: run a tool of this program or of a program it declares, synchronously, in this worker,
 * with the permissions of the chain's caller: a program the caller may not call is refused.
 */
const call: HostCall = (ctx, request) => {
  if (!isPlainObject(request) || typeof request.program !== 'string' || typeof request.tool !== 'string') {
    return refused('a berm.call request is {"program": string, "tool": string, "args": object}');
  }
  const { program: name, tool } = request;
  const self = ctx.program;
  if (name !== self.name && !self.payload.programs.includes(name)) {
    return refused(`program "${name}" is neither "${self.name}" itself nor declared in its deps.programs`);
  }
  // Before the lookup: a task carries only the programs reachable within the depth limit (runner.ts).
  const limit = ctx.chain.limits.maxCallDepth;
  if (ctx.depth >= limit) return refused(`the call chain is at its depth limit (${limit}): ${name}.${tool} was not called`);
  // Before the lookup, as the runner checks the called harness: a caller learns nothing of what it may not call.
  const caller = ctx.chain.barredBy(name);
  if (caller !== undefined) return refused(notPermitted(caller, name, tool).message);
  const target = ctx.chain.program(name);
  if (target === undefined) return refused(`program "${name}" is not deployed`);
  if (!target.payload.tools.includes(tool)) return refused(`program "${name}" has no tool "${tool}"`);
  const args = request.args === undefined ? {} : request.args;
  const problem = ctx.chain.checkArguments(target, tool, args);
  if (problem !== undefined) return refused(`${name}.${tool}: ${problem}`);
  // Counted only for a call that runs, so a retried chain making the same calls derives the same keys.
  const ordinal = ctx.calls++;
  const key = ctx.key === undefined ? undefined : nestedKey(ctx.key, ordinal, name, tool);
  const outcome = ctx.chain.invoke(target, tool, JSON.stringify(args), ctx.depth + 1, key);
  return 'ok' in outcome ? { ok: outcome.ok } : { failed: outcome.error.message };
};

/** `berm.idempotency_key`: the key of the instance asking (a reconcile tool looks the write up with it); null without one. */
const idempotencyKey: HostCall = (ctx) => ({ ok: ctx.key ?? null });

/**
 * Logs and events travel to the main thread as messages; without a bound a guest logging in a loop
 * until its time limit could queue gigabytes there. A call (its whole chain) may send at most
 * `maxResultBytes` of log and event requests; past that they are refused.
 */
function overBudget(ctx: HostCallContext, size: number): HostEnvelope | undefined {
  if (ctx.chain.spend(size)) return undefined;
  return refused(`this call has sent its ${ctx.chain.limits.maxResultBytes} bytes of logs and events`);
}

/** `berm.log`: a line in the daemon's log, tagged with the harness and tool that wrote it. */
const log: HostCall = (ctx, request, size) => {
  if (!isPlainObject(request) || typeof request.level !== 'string' || typeof request.message !== 'string') {
    return refused('a berm.log request is {"level": string, "message": string}');
  }
  if (!LOG_LEVELS.has(request.level)) return refused(`log level "${request.level}" is not one of ${[...LOG_LEVELS].join(', ')}`);
  const spent = overBudget(ctx, size);
  if (spent !== undefined) return spent;
  ctx.chain.post({ kind: 'log', harness: ctx.program.name, tool: ctx.tool, level: request.level, message: request.message });
  return { ok: null };
};

/** `berm.emit`: a typed event, accepted only when the manifest declares it and its fields match. */
const emit: HostCall = (ctx, request, size) => {
  if (!isPlainObject(request) || typeof request.event !== 'string') {
    return refused('a berm.emit request is {"event": string, "fields": object}');
  }
  const { event } = request;
  if (!ctx.program.payload.events.includes(event)) return refused(`event "${event}" is not declared by "${ctx.program.name}"`);
  const fields = request.fields === undefined ? {} : request.fields;
  const problem = ctx.chain.checkFields(ctx.program, event, fields);
  if (problem !== undefined) return refused(`event "${event}": ${problem}`);
  const spent = overBudget(ctx, size);
  if (spent !== undefined) return spent;
  ctx.chain.post({ kind: 'event', harness: ctx.program.name, tool: ctx.tool, event, fields });
  return { ok: null };
};

/**
 * The most `berm.progress` reports one call sends: a client shows progress, it does not need every step,
 * and a guest reporting in a loop must not flood its client (nor the main thread) until its time limit.
 */
export const MAX_PROGRESS_REPORTS = 1000;

function finite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** `berm.progress`: how far the call has come, sent to its client as `notifications/progress` when it asked for them. */
const progress: HostCall = (ctx, request, size) => {
  if (!isPlainObject(request) || !finite(request.progress) || (request.total !== undefined && !finite(request.total))) {
    return refused('a berm.progress request is {"progress": number, "total"?: number, "message"?: string}');
  }
  if (request.message !== undefined && typeof request.message !== 'string') return refused('a berm.progress "message" is a string');
  const problem = ctx.chain.advance(request.progress, MAX_PROGRESS_REPORTS);
  if (problem !== undefined) return refused(problem);
  const spent = overBudget(ctx, size);
  if (spent !== undefined) return spent;
  const { total, message } = request;
  ctx.chain.post({
    kind: 'progress',
    harness: ctx.program.name,
    tool: ctx.tool,
    progress: request.progress,
    ...(total === undefined ? {} : { total }),
    ...(message === undefined ? {} : { message }),
  });
  return { ok: null };
};

/**
 * `berm.resource_updated`: the program's resource at `path` (a declared path, or one a declared template
 * matches) changed; the sessions subscribed to it are told. Counted against the call's budget as logs are.
 */
const resourceUpdated: HostCall = (ctx, request, size) => {
  if (!isPlainObject(request) || typeof request.path !== 'string') return refused('a berm.resource_updated request is {"path": string}');
  const { path } = request;
  const declared = ctx.program.payload.resources ?? [];
  const matches = declared.some((d) => {
    if (d === path) return true;
    const parts = parseTemplate(d);
    return typeof parts !== 'string' && matchTemplate(parts, path) !== undefined;
  });
  if (!matches) return refused(`"${ctx.program.name}" declares no resource or template at path ${JSON.stringify(path)}`);
  const spent = overBudget(ctx, size);
  if (spent !== undefined) return spent;
  ctx.chain.post({ kind: 'resource-updated', harness: ctx.program.name, path });
  return { ok: null };
};

export const HOST_CALLS: ReadonlyMap<string, HostCall> = new Map([
  [RESOURCE_UPDATED, resourceUpdated],
  [HOST_CALL.call, call],
  [HOST_CALL.log, log],
  [HOST_CALL.emit, emit],
  [HOST_CALL.idempotencyKey, idempotencyKey],
  [HOST_CALL.progress, progress],
  // Served on the main thread by the runner's hostServices; refused when it has none for the name.
  ...ASYNC_HOST_CALLS.map((name): [string, HostCall] => [name, forwardedHostCall(name)]),
  // Served on the main thread by the call's own `ask`: the client that made the call answers.
  ...ASK_HOST_CALLS.map((name): [string, HostCall] => [name, forwardedHostCall(name)]),
]);

/** The dotted names of every host call this runtime serves. */
export const SERVED_HOST_CALLS: readonly string[] = [...HOST_CALLS.keys()];
