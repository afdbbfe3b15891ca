#!/usr/bin/env node
// Runs the MCP conformance suite's server scenarios (@modelcontextprotocol/conformance, pinned in the
// root package.json) against a running bermd: `npm run conformance -- --url http://127.0.0.1:7477/mcp`,
// any further flag passed to the suite (`--scenario NAME`, `--suite all`, `--verbose`). The suite needs
// Node 22 or newer (it imports what Node 20's fs lacks): it runs on this Node when it is new enough, and
// on Node 22 fetched by npx otherwise. Exits with the suite's status. packages/bermd/test/conformance.test.ts
// runs it through `suiteCommand` below, against a bermd serving examples/conformance.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The suite's command line, `node dist/index.js server ...args`, on a Node that can run it. */
export function suiteCommand(args) {
  const cli = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 22) return { command: process.execPath, args: [cli, 'server', ...args] };
  return { command: 'npx', args: ['-y', 'node@22', cli, 'server', ...args] };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (!args.includes('--url')) {
    console.error(
      'conformance: no --url: give the /mcp address of a bermd serving examples/conformance as test with --tool-separator _ --resource-uris harness-scheme, e.g. npm run conformance -- --url http://127.0.0.1:7477/mcp',
    );
    process.exit(2);
  }
  const { command, args: full } = suiteCommand(args);
  const child = spawn(command, full, { stdio: 'inherit' });
  child.on('error', (error) => {
    console.error(`conformance: could not run ${command}: ${error.message}`);
    process.exit(2);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
