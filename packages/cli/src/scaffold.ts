/**
 * What `crab new NAME` writes: a harness that builds as it is, with one tool, one event, a test that
 * runs the built image on bermd's runtime (`@berm/guest/testing`), and a README that says how to build, deploy and call it.
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

// A tool that writes outside the program (sends a message, places an order) declares its effect, so
// a client knows whether a retried call may act twice; a @query writes nothing. For example:
//
//   /**
//    * Places an order; calling it again with the same key places nothing new.
//    * @effect external_write
//    * @retry idempotency_key
//    * @compensation cancelOrder
//    */
//   export function placeOrder(args: OrderArgs): Receipt { ... }
`;

const TSCONFIG = `{
  "extends": "assemblyscript/std/assembly.json",
  "include": ["./**/*.ts"]
}
`;

function testFile(name: string): string {
  return `// Runs build/${name}.wasm in bermd's own runtime, with its limits, validators and host calls, as a
// deploy would admit it and an MCP client would call it: crab build && npm install && node --test
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "@berm/guest/testing";

const image = new URL("../build/${name}.wasm", import.meta.url);

test("hello greets, and says so with an event", async (t) => {
  const harness = await load(image);
  t.after(() => harness.close());
  const answer = await harness.call("hello", { name: "Ada", excitement: 2 });
  assert.equal(answer.isError, false);
  assert.deepEqual(answer.result, { message: "Hello, Ada!!", length: 12 });
  assert.deepEqual(answer.events, [{ harness: "${name}", tool: "hello", event: "greeted", fields: { name: "Ada" } }]);
});

test("hello answers an error for an empty name", async (t) => {
  const harness = await load(image);
  t.after(() => harness.close());
  const answer = await harness.call("hello", { name: "" });
  assert.equal(answer.isError, true);
  assert.deepEqual(answer.content, [{ type: "text", text: "name is empty: say who to greet" }]);
});

test("hello refuses arguments its schema does not allow, before it runs", async (t) => {
  const harness = await load(image);
  t.after(() => harness.close());
  await assert.rejects(harness.call("hello", { excitement: 1 }), { code: "invalid-arguments" });
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
crab build                      # writes build/${name}.wasm, the manifest embedded
crab run . hello name=Ada       # builds, then runs one tool with bermd's runtime and limits, no daemon
npm install && node --test      # the tests, on bermd's runtime (@berm/guest/testing)
crab inspect build/${name}.wasm
\`\`\`

Building needs nothing installed: crab brings the compiler, json-as and the guest library. \`npm install\`
gives your editor their types (crab then builds with those versions) and the tests their runtime.

## Deploy and call

\`\`\`sh
bermd &                                   # the daemon, on 127.0.0.1:7477
crab deploy ${name} build/${name}.wasm
berm call ${name}.hello name=Ada          # through bermd's /mcp, as an MCP client calls it
\`\`\`

An MCP client connected to \`http://127.0.0.1:7477/mcp\` lists the tool \`${name}.hello\` and calls it
with \`{"name": "Ada"}\`; a session that set a log level receives the \`greeted\` event as a notice.
`;
}
