import { breaks, type Break, type JsonSchema, type ManifestData, type ToolSpec } from '@berm/manifest';

export function manifest(parts: Partial<ManifestData> = {}): ManifestData {
  return {
    abi_version: 1,
    version: '0.1.0',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools: [],
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
    ...parts,
  };
}

export function tool(name: string, parts: Partial<ToolSpec> = {}): ToolSpec {
  return { name, description: `The ${name} tool.`, arguments: { type: 'object', properties: {} }, ...parts };
}

export interface Place {
  code: string;
  path: string;
}

export function places(list: readonly Break[]): Place[] {
  return list.map((b) => ({ code: b.code, path: b.path }));
}

/** The breaks of one schema change applied to argument `x` of tool `t` (optional on both sides). */
export function asArgument(old: JsonSchema, next: JsonSchema): Break[] {
  const args = (x: JsonSchema): JsonSchema => ({ type: 'object', properties: { x } });
  return breaks(manifest({ tools: [tool('t', { arguments: args(old) })] }), manifest({ tools: [tool('t', { arguments: args(next) })] }));
}

/** The breaks of one schema change applied to field `x` of tool `t`'s result (required on both sides). */
export function asResult(old: JsonSchema, next: JsonSchema): Break[] {
  const returns = (x: JsonSchema): JsonSchema => ({ type: 'object', title: 'Out', properties: { x }, required: ['x'] });
  return breaks(manifest({ tools: [tool('t', { returns: returns(old) })] }), manifest({ tools: [tool('t', { returns: returns(next) })] }));
}

/** The breaks of one schema change applied to field `x` of event `e` (required on both sides). */
export function asEventField(old: JsonSchema, next: JsonSchema): Break[] {
  const fields = (x: JsonSchema): JsonSchema => ({ type: 'object', properties: { x }, required: ['x'] });
  const event = (x: JsonSchema) => ({ name: 'e', description: 'An event.', fields: fields(x) });
  return breaks(manifest({ events: [event(old)] }), manifest({ events: [event(next)] }));
}
