/**
 * What `crab new NAME` writes: a harness that builds as it is, with one tool, one event, a test that
 * runs the built image with nothing but Node, and a README that says how to build, deploy and call it.
 */

/** A name that is both a harness name (spec §5) and an npm package name. */
export const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The versions written into the project's package.json for editor types after `npm install`. */
export interface ScaffoldVersions {
  assemblyscript: string;
  jsonAs: string;
  guest: string;
}

export interface ScaffoldFile {
  path: string;
  content: string;
}

export function scaffold(name: string, versions: ScaffoldVersions): ScaffoldFile[] {
  const pkg = {
    name,
    version: '0.1.0',
    description: `The ${name} harness: says hello.`,
    private: true,
    type: 'module',
    scripts: { build: 'crab build', test: 'node --test' },
    berm: {
      usage: 'Call hello with a name to greet someone; it answers the greeting and its length.',
      deps: { programs: [], syscalls: {}, secrets: [] },
    },
    devDependencies: {
      '@berm/guest': `^${versions.guest}`,
      assemblyscript: `^${versions.assemblyscript}`,
      'json-as': `~${versions.jsonAs}`,
    },
  };
  return [
    { path: 'package.json', content: `${JSON.stringify(pkg, null, 2)}\n` },
    { path: 'assembly/index.ts', content: INDEX },
    { path: 'assembly/tsconfig.json', content: TSCONFIG },
    { path: `test/${name}.test.mjs`, content: testFile(name) },
    { path: 'README.md', content: readme(name) },
    { path: '.gitignore', content: 'build/\nnode_modules/\n' },
  ];
}

const INDEX = `import { emit } from "@berm/guest";

/** Who to greet, and how. */
@json
class HelloArgs {
  /** The name to greet. */
  name!: string;
  /** How many exclamation marks to end with. */
  excitement: u32 = 1;
}

/** A greeting. */
@json
class Greeting {
  /** The greeting itself. */
  message: string = "";
  /** Its length in characters. */
  length: u32 = 0;
}

/**
 * Someone was greeted.
 * @event
 */
@json
class Greeted {
  /** Who. */
  name: string = "";
}

/**
 * Greets someone by name.
 * @query
 */
export function hello(args: HelloArgs): Greeting {
  if (args.name.length == 0) throw new Error("name is empty: say who to greet");
  const greeting = new Greeting();
  greeting.message = "Hello, " + args.name + "!".repeat(<i32>args.excitement);
  greeting.length = <u32>greeting.message.length;
  const greeted = new Greeted();
  greeted.name = args.name;
  emit(greeted);
  return greeting;
}
`;

const TSCONFIG = `{
  "extends": "assemblyscript/std/assembly.json",
  "include": ["./**/*.ts"]
}
`;

function testFile(name: string): string {
  return `// Runs build/${name}.wasm the way a berm host does (docs/contract.md §4), with nothing but Node:
// crab build && node --test
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function load() {
  const events = [];
  let exports;
  const read = (ptr, len) => JSON.parse(decoder.decode(new Uint8Array(exports.memory.buffer, ptr, len)));
  const write = (value) => {
    const bytes = encoder.encode(JSON.stringify(value));
    const ptr = exports.berm_alloc(bytes.length);
    new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
    return (BigInt(ptr) << 32n) | BigInt(bytes.length);
  };
  const host = {
    berm: {
      log: () => write({ ok: null }),
      emit: (ptr, len) => {
        events.push(read(ptr, len));
        return write({ ok: null });
      },
      call: () => write({ refused: "no other program in this test" }),
    },
  };
  const { instance } = await WebAssembly.instantiate(await readFile(new URL("../build/${name}.wasm", import.meta.url)), host);
  exports = instance.exports;
  const call = (tool, args) => {
    const bytes = encoder.encode(JSON.stringify(args));
    const ptr = exports.berm_alloc(bytes.length);
    new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
    const packed = exports[\`berm_tool_\${tool}\`](ptr, bytes.length);
    return read(Number(packed >> 32n), Number(packed & 0xffffffffn));
  };
  return { call, events };
}

test("hello greets, and says so with an event", async () => {
  const { call, events } = await load();
  assert.deepEqual(call("hello", { name: "Ada", excitement: 2 }), { ok: { message: "Hello, Ada!!", length: 12 } });
  assert.deepEqual(events, [{ event: "greeted", fields: { name: "Ada" } }]);
});

test("hello answers an error for an empty name", async () => {
  const { call } = await load();
  assert.deepEqual(call("hello", { name: "" }), { error: "name is empty: say who to greet" });
});
`;
}

function readme(name: string): string {
  return `# ${name}

A berm harness written in AssemblyScript: one tool, \`hello\`, which greets someone and emits the
event \`greeted\`. The tools are the functions \`assembly/index.ts\` exports; their doc comments,
parameter and result types become the manifest (see the @berm/guest README for the authoring contract).

## Build

\`\`\`sh
crab build              # writes build/${name}.wasm, the manifest embedded
node --test             # runs the image the way a host does
crab inspect build/${name}.wasm
\`\`\`

Nothing needs installing: crab brings the compiler, json-as and the guest library. \`npm install\`
gives your editor their types, and crab then builds with those versions.

## Deploy and call

\`\`\`sh
bermd &                                   # the daemon, on 127.0.0.1:7477
crab deploy ${name} build/${name}.wasm
\`\`\`

An MCP client connected to \`http://127.0.0.1:7477/mcp\` lists the tool \`${name}.hello\` and calls it
with \`{"name": "Ada"}\`; a session that set a log level receives the \`greeted\` event as a notice.
`;
}
