/**
 * The attribute sets bermd's instruments record with, each made once per combination of labels and
 * handed out again after that (never changed: the SDK may hold the object it was given). They are found
 * through maps nested by label rather than by a key string, so a call that finds its set builds nothing. What belongs to a harness is kept under it and dropped with it (`forget`), so names
 * that come and go leave nothing behind.
 */
import type { Attributes } from '@opentelemetry/api';
import { methodLabel } from './mcp-methods.js';
import type { CallOutcomeLabel } from './outcomes.js';

/** The key of a label the call did not have: no harness, tool or error is ever named by the empty string. */
const NONE = '';

/** A deployed tool as an MCP request names it: its listed name and the harness that serves it. */
export interface ListedTool {
  name: string;
  harness: string;
}

interface HarnessSets {
  harness: Attributes;
  /** The calls counter's, by tool (NONE: a tool the harness does not have), then outcome. */
  calls: Map<string, Map<CallOutcomeLabel, Attributes>>;
  /** The `tools/call` durations', by listed tool name, then `error.type` (NONE: none). */
  operations: Map<string, Map<string, Attributes>>;
}

function inner<K, V>(outer: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let map = outer.get(key);
  if (map === undefined) outer.set(key, (map = new Map()));
  return map;
}

const TOOLS_CALL = 'tools/call';

/** The set of `byError` for `error`, made the first time. */
function settled(byError: Map<string, Attributes>, error: string | undefined, method: string, tool: string | undefined): Attributes {
  let labels = byError.get(error ?? NONE);
  if (labels === undefined) {
    labels = { 'mcp.method.name': method };
    if (tool !== undefined) labels['gen_ai.tool.name'] = tool;
    if (error !== undefined) labels['error.type'] = error;
    byError.set(error ?? NONE, labels);
  }
  return labels;
}

export class LabelSets {
  private readonly harnesses = new Map<string, HarnessSets>();
  /** The calls counter's for calls naming no deployed harness, by outcome. */
  private readonly unknownCalls = new Map<CallOutcomeLabel, Attributes>();
  /** The durations' of requests naming no deployed tool, by method label, then `error.type` (NONE: none). */
  private readonly requests = new Map<string, Map<string, Attributes>>();

  /** `{ harness }`. */
  harness(name: string): Attributes {
    return this.of(name).harness;
  }

  /** `{ outcome, harness?, tool? }` of the calls counter; `tool` only with `harness`, as the runtime reports it. */
  call(harness: string | undefined, tool: string | undefined, outcome: CallOutcomeLabel): Attributes {
    const byOutcome = harness === undefined ? this.unknownCalls : inner(this.of(harness).calls, tool ?? NONE);
    let labels = byOutcome.get(outcome);
    if (labels === undefined) {
      labels = { outcome };
      if (harness !== undefined) labels.harness = harness;
      if (tool !== undefined) labels.tool = tool;
      byOutcome.set(outcome, labels);
    }
    return labels;
  }

  /** `{ mcp.method.name, error.type? }` of a request's duration, naming no tool. */
  request(method: unknown, error: string | undefined): Attributes {
    const label = methodLabel(method);
    return settled(inner(this.requests, label), error, label, undefined);
  }

  /** `{ mcp.method.name: tools/call, gen_ai.tool.name, error.type? }` of the duration of a call of a listed tool. */
  toolCall(tool: ListedTool, error: string | undefined): Attributes {
    return settled(inner(this.of(tool.harness).operations, tool.name), error, TOOLS_CALL, tool.name);
  }

  /** Drops every set naming `harness`. */
  forget(harness: string): void {
    this.harnesses.delete(harness);
  }

  private of(harness: string): HarnessSets {
    let sets = this.harnesses.get(harness);
    if (sets === undefined) this.harnesses.set(harness, (sets = { harness: { harness }, calls: new Map(), operations: new Map() }));
    return sets;
  }
}
