import { describe, expect, it } from 'vitest';
import { BREAK_CODES, breaks, isBreakCode, Manifest, type EventSpec, type ManifestData } from '@berm/manifest';
import { buildImage } from '../../../../test/helpers/wat.js';
import { manifest, places, tool } from './support.js';

const forecastArgs = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    units: { type: 'string', title: 'Units', enum: ['metric', 'imperial'] },
    days: { type: 'integer', format: 'uint8', minimum: 0, maximum: 14 },
  },
  required: ['city'],
};

const forecastResult = {
  type: 'object',
  title: 'Forecast',
  properties: {
    city: { type: 'string' },
    days: { type: 'array', items: { $ref: '#/$defs/Day' } },
  },
  required: ['city', 'days'],
  $defs: {
    Day: {
      type: 'object',
      title: 'Day',
      properties: {
        date: { type: 'string', format: 'date' },
        high: { type: 'integer', format: 'int32' },
        rain: { type: 'integer', format: 'uint8', minimum: 0 },
      },
      required: ['date', 'high', 'rain'],
    },
  },
};

const alert: EventSpec = {
  name: 'alert',
  description: 'A weather alert was issued.',
  fields: {
    type: 'object',
    title: 'Alert',
    properties: { level: { type: 'string', enum: ['yellow', 'red'] }, area: { type: 'string' } },
    required: ['level', 'area'],
  },
};

function weather(): ManifestData {
  return manifest({
    tools: [
      tool('forecast', { arguments: forecastArgs, returns: forecastResult, query: true }),
      tool('subscribe', {
        arguments: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        returns: { type: 'boolean' },
      }),
    ],
    events: [alert],
  });
}

describe('breaks: tools and events', () => {
  it('identical manifests break nothing', () => {
    expect(breaks(weather(), weather())).toEqual([]);
    expect(breaks(weather(), structuredClone(weather()))).toEqual([]);
  });

  it('added tools, events and optional arguments break nothing; neither do new result fields or deprecation', () => {
    const next = weather();
    next.tools.push(tool('history', { query: true }));
    next.events.push({ name: 'cleared', description: 'An alert ended.', fields: { type: 'object', properties: {} } });
    next.tools[0] = {
      ...next.tools[0],
      deprecated: true,
      arguments: { ...forecastArgs, properties: { ...forecastArgs.properties, hourly: { type: 'boolean' } } },
      returns: {
        ...forecastResult,
        properties: { ...forecastResult.properties, source: { type: 'string' } },
        required: [...forecastResult.required, 'source'],
      },
    };
    expect(breaks(weather(), next)).toEqual([]);
  });

  it('a tool becoming a query, or gaining a result schema, breaks nothing', () => {
    const old = manifest({ tools: [tool('t')] });
    expect(breaks(old, manifest({ tools: [tool('t', { query: true, returns: { type: 'integer' } })] }))).toEqual([]);
  });

  it('a required argument added is newly required', () => {
    const next = weather();
    next.tools[1] = {
      ...next.tools[1],
      arguments: { type: 'object', properties: { city: { type: 'string' }, token: { type: 'string' } }, required: ['city', 'token'] },
    };
    const found = breaks(weather(), next);
    expect(found).toEqual([
      {
        code: 'argument-newly-required',
        tool: 'subscribe',
        path: '/arguments/properties/token',
        message: 'argument `token` of tool `subscribe` is now required (it is new)',
      },
    ]);
  });

  it('a removed tool or event is reported, saying when old had deprecated it', () => {
    const old = weather();
    old.tools[1] = { ...old.tools[1], deprecated: true };
    const next = manifest({ tools: [old.tools[0]], events: [] });
    expect(breaks(old, next)).toEqual([
      { code: 'tool-removed', tool: 'subscribe', path: '', message: 'tool `subscribe` was removed (it was deprecated)' },
      { code: 'event-removed', event: 'alert', path: '', message: 'event `alert` was removed' },
    ]);
    const plain = breaks(weather(), manifest({ tools: [weather().tools[0]], events: [alert] }));
    expect(plain).toEqual([{ code: 'tool-removed', tool: 'subscribe', path: '', message: 'tool `subscribe` was removed' }]);
  });

  it('a tool that was a query and is no longer one', () => {
    const next = weather();
    next.tools[0] = { ...next.tools[0], query: false };
    expect(breaks(weather(), next)).toEqual([
      {
        code: 'tool-no-longer-query',
        tool: 'forecast',
        path: '/query',
        message: 'tool `forecast` is no longer a query: it may now change state (query was true, now unset)',
      },
    ]);
  });

  it('a result schema dropped: the result may now be anything', () => {
    const next = weather();
    delete next.tools[1].returns;
    expect(places(breaks(weather(), next))).toEqual([{ code: 'type-changed', path: '/returns' }]);
  });

  it('event fields are read like results: an optional or removed field is no longer always present', () => {
    const optional: EventSpec = { ...alert, fields: { ...(alert.fields as object), required: ['level'] } };
    const removed: EventSpec = {
      ...alert,
      fields: { type: 'object', title: 'Alert', properties: { level: { type: 'string', enum: ['yellow', 'red'] } }, required: ['level'] },
    };
    const widened: EventSpec = {
      ...alert,
      fields: {
        ...(alert.fields as object),
        properties: { level: { type: 'string', enum: ['yellow', 'orange', 'red'] }, area: { type: 'string' } },
      },
    };
    expect(breaks(weather(), manifest({ ...weather(), events: [optional] }))).toEqual([
      {
        code: 'field-no-longer-always-present',
        event: 'alert',
        path: '/fields/properties/area',
        message: 'field `area` of event `alert` is now optional (was required)',
      },
    ]);
    expect(breaks(weather(), manifest({ ...weather(), events: [removed] })).map((b) => [b.code, b.path, b.message])).toEqual([
      ['field-no-longer-always-present', '/fields/properties/area', 'field `area` of event `alert` is gone (was always present)'],
    ]);
    expect(breaks(weather(), manifest({ ...weather(), events: [widened] })).map((b) => [b.code, b.path, b.message])).toEqual([
      [
        'result-writes-more-strings',
        '/fields/properties/level',
        'field `level` of event `alert` may now be "orange" (was one of "yellow", "red", now one of "yellow", "orange", "red")',
      ],
    ]);
  });

  it('a result that is still what old callers read breaks nothing, even rewritten', () => {
    const next = weather();
    next.tools[0] = {
      ...next.tools[0],
      returns: {
        allOf: [{ $ref: '#/definitions/Forecast' }],
        definitions: {
          Forecast: {
            type: 'object',
            title: 'Forecast',
            properties: { city: { type: 'string' }, days: { type: 'array', items: { $ref: '#/definitions/Day' } } },
            required: ['days', 'city'],
          },
          Day: forecastResult.$defs.Day,
        },
      },
    };
    expect(breaks(weather(), next)).toEqual([]);
  });
});

describe('breaks: order and stability', () => {
  function changed(): ManifestData {
    const next = weather();
    next.tools.reverse();
    next.events = [];
    const forecast = next.tools.find((t) => t.name === 'forecast')!;
    forecast.query = undefined;
    forecast.arguments = {
      type: 'object',
      properties: {
        city: { type: 'string', maxLength: 40 },
        units: { type: 'string', title: 'Units', enum: ['metric'] },
        days: { type: 'integer', format: 'uint8', minimum: 1, maximum: 7 },
      },
      required: ['city', 'units'],
      additionalProperties: false,
    };
    forecast.returns = {
      ...forecastResult,
      $defs: {
        Day: {
          ...forecastResult.$defs.Day,
          properties: { ...forecastResult.$defs.Day.properties, rain: { type: 'integer', format: 'int16' } },
          required: ['date', 'high'],
        },
      },
    };
    next.tools.find((t) => t.name === 'subscribe')!.returns = { type: ['boolean', 'null'] };
    return next;
  }

  it('lists breaks by tool in old order, then events, each walked in old order', () => {
    expect(breaks(weather(), changed()).map((b) => ({ code: b.code, tool: b.tool, event: b.event, path: b.path }))).toEqual([
      { code: 'tool-no-longer-query', tool: 'forecast', event: undefined, path: '/query' },
      { code: 'argument-accepts-fewer-strings', tool: 'forecast', event: undefined, path: '/arguments/properties/city' },
      { code: 'argument-newly-required', tool: 'forecast', event: undefined, path: '/arguments/properties/units' },
      { code: 'argument-accepts-fewer-strings', tool: 'forecast', event: undefined, path: '/arguments/properties/units' },
      { code: 'argument-range-narrowed', tool: 'forecast', event: undefined, path: '/arguments/properties/days' },
      { code: 'argument-no-longer-accepted', tool: 'forecast', event: undefined, path: '/arguments/additionalProperties' },
      {
        code: 'field-no-longer-always-present',
        tool: 'forecast',
        event: undefined,
        path: '/returns/properties/days/items/properties/rain',
      },
      { code: 'unsigned-became-signed', tool: 'forecast', event: undefined, path: '/returns/properties/days/items/properties/rain' },
      { code: 'result-range-widened', tool: 'forecast', event: undefined, path: '/returns/properties/days/items/properties/rain' },
      { code: 'type-changed', tool: 'subscribe', event: undefined, path: '/returns' },
      { code: 'event-removed', tool: undefined, event: 'alert', path: '' },
    ]);
  });

  it('gives the same answer every time, and does not depend on next listing things in the same order', () => {
    const first = breaks(weather(), changed());
    expect(breaks(weather(), changed())).toEqual(first);
    const shuffled = changed();
    shuffled.tools.reverse();
    expect(breaks(weather(), shuffled)).toEqual(first);
  });

  it('messages are one line, name the place and both sides', () => {
    const found = breaks(weather(), changed());
    for (const b of found) expect(b.message).not.toMatch(/[\r\n]/);
    const byPlace = new Map(found.map((b) => [`${b.code} ${b.path}`, b.message]));
    expect(byPlace.get('argument-range-narrowed /arguments/properties/days')).toBe(
      'argument `days` of tool `forecast` accepts a smaller range: [1, 7] (was [0, 14])',
    );
    expect(byPlace.get('unsigned-became-signed /returns/properties/days/items/properties/rain')).toBe(
      'result field `days[].rain` of tool `forecast` may now be negative (was [0, 255], now [-32768, 32767])',
    );
    expect(byPlace.get('argument-no-longer-accepted /arguments/additionalProperties')).toBe(
      'the arguments object of tool `forecast` no longer accepts properties other than `city`, `units`, `days` (additionalProperties was unset, now false)',
    );
    expect(byPlace.get('type-changed /returns')).toBe('the result of tool `subscribe` may now be null (was boolean, now boolean|null)');
  });

  it('names with line breaks still give one-line messages', () => {
    const old = manifest({ tools: [tool('t', { arguments: { type: 'object', properties: { 'a\nb': { type: 'string' } } } })] });
    const next = manifest({
      tools: [tool('t', { arguments: { type: 'object', properties: { 'a\nb': { type: 'string' } }, required: ['a\nb'] } })],
    });
    const [b] = breaks(old, next);
    expect(b.message).toBe('argument `a b` of tool `t` is now required (was optional)');
    expect(b.path).toBe('/arguments/properties/a\nb');
  });
});

describe('breaks: the codes', () => {
  it('are the stable codes of the contract', () => {
    expect(BREAK_CODES).toEqual([
      'tool-removed',
      'event-removed',
      'tool-no-longer-query',
      'argument-newly-required',
      'argument-no-longer-accepted',
      'field-no-longer-always-present',
      'type-changed',
      'unsigned-became-signed',
      'argument-range-narrowed',
      'result-range-widened',
      'argument-accepts-fewer-strings',
      'result-writes-more-strings',
      'variant-removed',
      'variant-added',
      'array-constraint-changed',
      'effect-now-writes',
      'retry-weakened',
      'content-removed',
      'prompt-removed',
      'prompt-argument-required',
      'resource-removed',
    ]);
    expect(isBreakCode('type-changed')).toBe(true);
    expect(isBreakCode('type-change')).toBe(false);
    expect(isBreakCode(7)).toBe(false);
  });

  it('each one is produced by some change, and nothing else is', () => {
    const shape = (titles: string[]) => ({
      oneOf: titles.map((title) => ({
        type: 'object',
        title,
        properties: { [title.toLowerCase()]: { type: 'number' } },
        required: [title.toLowerCase()],
      })),
    });
    const old = manifest({
      tools: [
        tool('gone'),
        tool('read', { query: true }),
        tool('notify', { effect: { kind: 'none' } }),
        tool('order', { effect: { kind: 'external_write', retry: 'idempotency_key' } }),
        tool('draw', { content: ['image', 'text'] }),
        tool('args', {
          arguments: {
            type: 'object',
            properties: {
              a: { type: 'string' },
              b: { type: 'number' },
              c: { type: 'integer', maximum: 9 },
              d: { type: 'string' },
              e: shape(['A', 'B']),
              f: { type: 'array', items: { type: 'string' } },
            },
          },
        }),
        tool('results', {
          returns: {
            type: 'object',
            properties: {
              a: { type: 'string' },
              b: { type: 'integer', minimum: 0 },
              c: { type: 'integer', maximum: 9 },
              d: { type: 'string', maxLength: 4 },
              e: shape(['A', 'B']),
              f: { type: 'array', items: { type: 'string' }, maxItems: 2 },
            },
            required: ['a'],
          },
        }),
      ],
      events: [{ name: 'ping', description: 'Ping.', fields: { type: 'object', properties: {} } }],
      prompts: [
        { name: 'dropped', description: '', arguments: [] },
        { name: 'kept', description: '', arguments: [{ name: 'who', description: '' }] },
      ],
      resources: [{ path: 'gone', name: 'Gone', description: '' }],
    });
    const next = manifest({
      prompts: [{ name: 'kept', description: '', arguments: [{ name: 'who', description: '', required: true }] }],
      tools: [
        tool('read'),
        tool('notify', { effect: { kind: 'external_write', retry: 'none' } }),
        tool('order', { effect: { kind: 'external_write', retry: 'reconcile', reconcile: 'read' } }),
        tool('draw', { content: ['text'] }),
        tool('args', {
          arguments: {
            type: 'object',
            properties: {
              a: { type: 'string' },
              b: { type: 'integer' },
              c: { type: 'integer', maximum: 5 },
              d: { type: 'string', pattern: '^x' },
              e: shape(['A']),
              f: { type: 'array', items: { type: 'string' }, minItems: 1 },
            },
            required: ['a'],
            additionalProperties: false,
          },
        }),
        tool('results', {
          returns: {
            type: 'object',
            properties: {
              a: { type: 'string' },
              b: { type: 'integer' },
              c: { type: 'integer', maximum: 99 },
              d: { type: 'string' },
              e: shape(['A', 'B', 'C']),
              f: { type: 'array', items: { type: 'string' }, maxItems: 2 },
            },
          },
        }),
      ],
    });
    const found = breaks(old, next);
    expect(new Set(found.map((b) => b.code))).toEqual(new Set(BREAK_CODES));
    expect(found).toHaveLength(BREAK_CODES.length);
  });
});

describe('breaks: through Manifest and real images', () => {
  const WAT = `(module
    (memory (export "memory") 1)
    (func (export "berm_alloc") (param i32) (result i32) (i32.const 0))
    (func (export "berm_tool_forecast") (param i32 i32) (result i64) (i64.const 0))
    (func (export "berm_tool_subscribe") (param i32 i32) (result i64) (i64.const 0)))`;

  it('Manifest.breaks compares what two images declare', async () => {
    const next = weather();
    next.tools[0] = { ...next.tools[0], returns: { ...forecastResult, required: ['days'] } };
    const oldImage = Manifest.fromImage(await buildImage(WAT, weather()));
    const nextImage = Manifest.fromImage(await buildImage(WAT, next));
    expect(places(oldImage.breaks(nextImage))).toEqual([{ code: 'field-no-longer-always-present', path: '/returns/properties/city' }]);
    expect(oldImage.breaks(Manifest.fromImage(await buildImage(WAT, weather())))).toEqual([]);
    expect(Manifest.fromJSON(weather()).breaks(Manifest.fromJSON(next))).toEqual(oldImage.breaks(nextImage));
  });
});
