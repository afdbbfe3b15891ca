// The README's "Connect a client" recipes, read from the README itself: the addresses and headers they
// configure are bermd's defaults and the ones the MCP tests connect with, and the stdio recipe, launched
// as written (its command, arguments and environment, with the address of a test daemon) by the MCP
// SDK's stdio client, serves bermd's tools. A recipe edited out of step with bermd fails here.
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_URL } from '@berm/client';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { deploy } from '../../bermd/test/mcp-client.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { mcpEndpoint } from '../dist/mcp-bridge.js';
import { repoRoot } from './helpers/cli.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Connect a client'), readme.indexOf('\n## ', readme.indexOf('## Connect a client') + 1));

function blocks(language: string): string[] {
  return [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

interface ServerEntry {
  type?: string;
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

const configs = blocks('json').map(
  (text) => JSON.parse(text) as { servers?: Record<string, ServerEntry>; mcpServers?: Record<string, ServerEntry> },
);
const endpoint = `${DEFAULT_URL}/mcp`;
/** The team's bermd the OAuth recipes name: its --resource. */
const TEAM_ENDPOINT = 'https://berm.example.com/mcp';

describe('README: Connect a client', () => {
  it('names the default endpoint, the one berm mcp relays to from the default address', () => {
    expect(section).toContain(`bermd listens on \`${DEFAULT_URL}\`; its MCP endpoint is \`${endpoint}\``);
    expect(mcpEndpoint(DEFAULT_URL).href).toBe(endpoint);
    expect(mcpEndpoint(endpoint).href).toBe(endpoint);
  });

  it('gives every HTTP recipe that endpoint and the bearer header bermd checks', () => {
    const entries = configs.flatMap((c) => Object.values(c.servers ?? c.mcpServers ?? {})).filter((e) => e.url !== undefined);
    const http = entries.filter((e) => e.url !== TEAM_ENDPOINT);
    expect(http).toHaveLength(2);
    for (const entry of http) {
      expect(entry.url).toBe(endpoint);
      expect(entry.headers?.Authorization).toMatch(/^Bearer \S+$/);
    }
    // A recipe for a bermd with an identity provider sends no header: the client signs in from the 401.
    const oauth = entries.filter((e) => e.url === TEAM_ENDPOINT);
    expect(oauth).toHaveLength(1);
    expect(oauth[0]!.headers).toBeUndefined();
    // ...and the bermd of the team's recipe names that URL as its resource, which the clients check.
    expect(section).toContain(`--resource ${TEAM_ENDPOINT}`);
    // VS Code's format: `servers`, and a type.
    expect(configs.find((c) => c.servers !== undefined)?.servers?.berm?.type).toBe('http');
    const commands = blocks('sh').join('\n');
    for (const line of commands.split('\n').filter((l) => l.includes('--transport http')))
      expect(line.includes(endpoint) || line.includes(TEAM_ENDPOINT) || line.endsWith('\\')).toBe(true);
    expect(commands).toContain(`claude mcp add --transport http berm ${endpoint} --header "Authorization: Bearer $BERM_TOKEN"`);
    expect(commands).toContain(`claude mcp add --transport stdio --env BERM_URL=${DEFAULT_URL} berm -- berm mcp`);
  });

  describe('the stdio recipe', () => {
    const stdio = configs.flatMap((c) => Object.values(c.mcpServers ?? {})).find((e) => e.command !== undefined)!;
    let d: RunningDaemon;

    beforeAll(async () => {
      d = await startDaemon();
      await deploy(d.url, 'recipe', await harnessImage(sampleManifest()));
    });
    afterAll(async () => {
      await d?.stop();
      if (d) await removeDir(d.stateDir);
    });

    it('is `berm mcp` with the daemon address in BERM_URL, and serves its tools when launched as written', async () => {
      expect(stdio).toMatchObject({ command: 'berm', args: ['mcp'], env: { BERM_URL: DEFAULT_URL } });
      const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
      const env: Record<string, string> = {
        ...inherited,
        ...stdio.env,
        BERM_URL: d.url,
        PATH: [join(repoRoot, 'bin'), dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      };
      // The recipe's token placeholder stands for the token of a daemon that has one; this one has none.
      delete env.BERM_TOKEN;
      const client = new Client({ name: 'recipe', version: '0' });
      await client.connect(new StdioClientTransport({ command: stdio.command!, args: stdio.args, env, stderr: 'ignore' }));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('recipe.echo');
      } finally {
        await client.close();
      }
    });
  });
});
