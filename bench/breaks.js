// Comparing manifests: time per `breaks(old, next)` at 100, 1,000 and 10,000 tools, and how it grows.
//
//   npx tsc -b packages/manifest && node bench/breaks.js [--runs 9]
//
// Each tool has nested argument and result schemas: objects, arrays, `$defs` references (one of
// them recursive), a nullable reference, a oneOf of titled variants and string enums. `next` is
// `old` parsed again from JSON (no shared objects) with every hundredth tool removed and some
// tools changed in three places each: every tenth (a typical release), then every one (the worst
// case: no schema is equal to its old self, so none is skipped). For scale, each size also times
// JSON.stringify of both manifests: a floor for anything that looks at every schema once.
import { parseArgs } from 'node:util';
import { breaks } from '@berm/manifest';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' } } });
const runs = Number(values.runs);
const SIZES = [100, 1000, 10000];

function toolAt(i) {
  return {
    name: `tool_${i}`,
    description: `Tool number ${i}.`,
    query: i % 2 === 0,
    arguments: {
      type: 'object',
      properties: {
        id: { type: 'integer', format: 'uint32', minimum: 0 },
        query: { type: 'string', maxLength: 200 },
        units: { type: 'string', title: 'Units', enum: ['metric', 'imperial', 'kelvin'] },
        filter: { $ref: '#/$defs/Filter' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 16 },
        shape: {
          oneOf: [
            { type: 'object', title: 'Circle', properties: { r: { type: 'number', minimum: 0 } }, required: ['r'] },
            { type: 'object', title: 'Square', properties: { side: { type: 'number', minimum: 0 } }, required: ['side'] },
            {
              type: 'object',
              title: 'Polygon',
              properties: { points: { type: 'array', items: { $ref: '#/$defs/Point' } } },
              required: ['points'],
            },
          ],
        },
      },
      required: ['id', 'query'],
      $defs: {
        Filter: {
          type: 'object',
          title: 'Filter',
          properties: {
            from: { type: ['string', 'null'], format: 'date' },
            to: { type: ['string', 'null'], format: 'date' },
            near: { anyOf: [{ $ref: '#/$defs/Point' }, { type: 'null' }] },
          },
        },
        Point: { type: 'object', title: 'Point', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
      },
    },
    returns: {
      type: 'object',
      title: `Result${i}`,
      properties: {
        items: { type: 'array', items: { $ref: '#/$defs/Item' } },
        cursor: { anyOf: [{ $ref: '#/$defs/Cursor' }, { type: 'null' }] },
        total: { type: 'integer', format: 'uint64', minimum: 0 },
      },
      required: ['items', 'total'],
      $defs: {
        Item: {
          type: 'object',
          title: 'Item',
          properties: {
            id: { type: 'integer', format: 'uint32', minimum: 0 },
            name: { type: 'string', maxLength: 80 },
            status: { type: 'string', title: 'Status', enum: ['open', 'closed'] },
            children: { type: 'array', items: { $ref: '#/$defs/Item' } },
          },
          required: ['id', 'name', 'status', 'children'],
        },
        Cursor: { type: 'object', title: 'Cursor', properties: { after: { type: 'string' } }, required: ['after'] },
      },
    },
  };
}

function manifestOf(tools) {
  return {
    abi_version: 1,
    version: '1.0.0',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools,
    events: [
      {
        name: 'changed',
        description: 'Something changed.',
        fields: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      },
    ],
    deps: { programs: [], syscalls: {}, secrets: [] },
  };
}

/** `old` read afresh, with every `every`th tool changed (three breaks each) and every hundredth removed. */
function changed(old, every) {
  const next = JSON.parse(JSON.stringify(old));
  next.tools = next.tools.filter((_, i) => i % 100 !== 99);
  for (const tool of next.tools) {
    const i = Number(tool.name.slice('tool_'.length));
    if (i % every !== 0) continue;
    tool.arguments.required.push('units');
    tool.returns.$defs.Item.properties.id = { type: 'integer', format: 'int32' };
    tool.returns.$defs.Item.properties.status.enum.push('archived');
  }
  return next;
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn) {
  const start = process.hrtime.bigint();
  const result = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

function measure(every) {
  const rows = [];
  for (const n of SIZES) {
    const old = manifestOf(Array.from({ length: n }, (_, i) => toolAt(i)));
    const next = changed(old, every);
    breaks(old, next); // warm-up
    const diffs = [];
    const floors = [];
    let found = [];
    for (let r = 0; r < runs; r++) {
      const diff = time(() => breaks(old, next));
      diffs.push(diff.ms);
      found = diff.result;
      floors.push(time(() => JSON.stringify(old).length + JSON.stringify(next).length).ms);
    }
    rows.push({ n, ms: median(diffs), floor: median(floors), breaks: found.length });
  }
  return rows;
}

function report(title, rows) {
  console.log(`\n${title}`);
  console.log('   tools    breaks    ms/diff   µs/tool   JSON.stringify ms   diff/stringify');
  for (const row of rows) {
    console.log(
      `${String(row.n).padStart(8)}  ${String(row.breaks).padStart(8)}  ${row.ms.toFixed(2).padStart(9)}  ${((row.ms * 1000) / row.n).toFixed(1).padStart(8)}  ${row.floor.toFixed(2).padStart(18)}  ${(row.ms / row.floor).toFixed(1).padStart(15)}`,
    );
  }
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1];
    const b = rows[i];
    console.log(`growth ${a.n} → ${b.n} tools (×${b.n / a.n}): time ×${(b.ms / a.ms).toFixed(2)}`);
  }
  const at1000 = rows.find((r) => r.n === 1000);
  console.log(`1,000 tools: ${at1000.ms.toFixed(1)} ms per diff (target < 100 ms)`);
}

console.log(`breaks(old, next), median of ${runs} runs (Node ${process.version})`);
report('every tenth tool changed, every hundredth removed', measure(10));
report('every tool changed, every hundredth removed', measure(1));
