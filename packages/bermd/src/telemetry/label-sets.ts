/**
 * What bermd's per-call instruments record into, one per combination of labels: made once from its
 * attribute set (never changed after: the SDK may hold the object it was given) and handed out again after
 * that. It is the attribute set itself for the SDK's instruments, or the series of bermd's own
 * (own-instruments.ts). They are found through maps nested by label rather than by a key string, so a call
 * that finds its own builds nothing. What belongs to a harness is kept under it and dropped with it
 * (`forget`), so names that come and go leave nothing behind here; an instrument keeps its series.
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

/** How each kind of label combination is turned into what is recorded into. */
export interface SeriesMakers<Call, Harness, Operation> {
  /** The calls counter's: `{ outcome, harness?, tool? }`. */
  call(attributes: Attributes): Call;
  /** The queue and run histograms': `{ harness }`. */
  harness(attributes: Attributes): Harness;
  /** `mcp.server.operation.duration`'s: `{ mcp.method.name, gen_ai.tool.name?, error.type? }`. */
  operation(attributes: Attributes): Operation;
}

interface HarnessSets<Call, Harness, Operation> {
  harness: Harness;
  /** The calls counter's, by tool (NONE: a tool the harness does not have), then outcome. */
  calls: Map<string, Map<CallOutcomeLabel, Call>>;
  /** The `tools/call` durations', by listed tool name, then `error.type` (NONE: none). */
  operations: Map<string, Map<string, Operation>>;
}

function inner<K, V>(outer: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let map = outer.get(key);
  if (map === undefined) outer.set(key, (map = new Map()));
  return map;
}

const TOOLS_CALL = 'tools/call';

export class LabelSets<Call, Harness, Operation> {
  private readonly harnesses = new Map<string, HarnessSets<Call, Harness, Operation>>();
  /** The calls counter's for calls naming no deployed harness, by outcome. */
  private readonly unknownCalls = new Map<CallOutcomeLabel, Call>();
  /** The durations' of requests naming no deployed tool, by method label, then `error.type` (NONE: none). */
  private readonly requests = new Map<string, Map<string, Operation>>();

  constructor(private readonly make: SeriesMakers<Call, Harness, Operation>) {}

  /** `{ harness }`'s. */
  harness(name: string): Harness {
    return this.of(name).harness;
  }

  /** The calls counter's; `tool` only with `harness`, as the runtime reports it. */
  call(harness: string | undefined, tool: string | undefined, outcome: CallOutcomeLabel): Call {
    const byOutcome = harness === undefined ? this.unknownCalls : inner(this.of(harness).calls, tool ?? NONE);
    let made = byOutcome.get(outcome);
    if (made === undefined) {
      const labels: Attributes = { outcome };
      if (harness !== undefined) labels.harness = harness;
      if (tool !== undefined) labels.tool = tool;
      byOutcome.set(outcome, (made = this.make.call(labels)));
    }
    return made;
  }

  /** A request's duration's, naming no tool. */
  request(method: unknown, error: string | undefined): Operation {
    const label = methodLabel(method);
    return this.operation(inner(this.requests, label), error, label, undefined);
  }

  /** The duration's of a call of a listed tool (`mcp.method.name` is `tools/call`). */
  toolCall(tool: ListedTool, error: string | undefined): Operation {
    return this.operation(inner(this.of(tool.harness).operations, tool.name), error, TOOLS_CALL, tool.name);
  }

  /** Drops every one naming `harness`. */
  forget(harness: string): void {
    this.harnesses.delete(harness);
  }

  /** The one of `byError` for `error`, made the first time. */
  private operation(byError: Map<string, Operation>, error: string | undefined, method: string, tool: string | undefined): Operation {
    let made = byError.get(error ?? NONE);
    if (made === undefined) {
      const labels: Attributes = { 'mcp.method.name': method };
      if (tool !== undefined) labels['gen_ai.tool.name'] = tool;
      if (error !== undefined) labels['error.type'] = error;
      byError.set(error ?? NONE, (made = this.make.operation(labels)));
    }
    return made;
  }

  private of(harness: string): HarnessSets<Call, Harness, Operation> {
    let sets = this.harnesses.get(harness);
    if (sets === undefined)
      this.harnesses.set(harness, (sets = { harness: this.make.harness({ harness }), calls: new Map(), operations: new Map() }));
    return sets;
  }
}
