// The settings table (@berm/protocol's SETTINGS) and what reads it: every consumer knows every row, so a
// new row (a per-harness limit above all) is taken up by the parser, the help, the deploy query, the
// stored bindings, `crab deploy`, the page's form (packages/ui/test/deploy.test.ts walks it in the page)
// and the README without more than the row.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEPLOY_PARAMS,
  DEPLOY_QUERY_SCHEMA,
  decodeDeployQuery,
  encodeDeployQuery,
  HARNESS_SETTINGS,
  printDefault,
  readSettingText,
  SETTINGS,
  type Setting,
  settingsTable,
} from '@berm/protocol';
import { parseOptions } from 'bermd';
import Deploy from '../packages/cli/dist/commands/deploy.js';
import { MAX_EVENT_STREAMS } from '../packages/bermd/dist/control/index.js';
import { decodeBindings } from '../packages/bermd/dist/deploy/index.js';
import { DEFAULT_HTTP_MAX_BODY } from '../packages/bermd/dist/egress/index.js';
import { MAX_LISTENS, MAX_MCP_BODY, MAX_SESSIONS, SESSION_IDLE_MS } from '../packages/bermd/dist/mcp/index.js';
import { USAGE } from '../packages/bermd/dist/options.js';

let dir: string;
/** Texts for the rows whose value is a name, a path or an address rather than a number: a row of those kinds needs one here. */
let texts: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'berm-settings-'));
  const token = path.join(dir, 'token');
  await writeFile(token, 'a-token\n');
  const secrets = path.join(dir, 'secrets.json');
  await writeFile(secrets, '{"example":"value"}');
  await chmod(secrets, 0o600);
  const access = path.join(dir, 'access.json');
  await writeFile(access, JSON.stringify([{ name: 'ci', token_sha256: 'a'.repeat(64), scopes: ['berm:read'] }]));
  const introspectionClient = path.join(dir, 'introspection-client');
  await writeFile(introspectionClient, 'berm-resource:a-secret\n');
  texts = {
    listen: '127.0.0.1:0',
    'metrics-listen': '127.0.0.1:9464',
    state: path.join(dir, 'state'),
    store: 'postgres://berm@db.internal:5432/berm',
    'token-file': token,
    'allowed-host': 'proxy.example.test',
    'log-level': 'debug',
    'tool-separator': '_',
    'resource-uris': 'harness-scheme',
    serve: 'berm.http.fetch',
    'http-proxy': 'http://proxy.internal:3128/',
    resolve: 'api.example.com:443:127.0.0.1',
    secrets,
    access,
    'oauth-issuer': 'https://id.example.test',
    resource: 'https://berm.example.test/mcp',
    'oauth-introspection-client': introspectionClient,
    'oauth-page-client': 'berm-page',
    'replica-name': 'replica-a',
    'otel-exporter-otlp-endpoint': 'http://127.0.0.1:4318',
    'otel-exporter-otlp-protocol': 'http/json',
    'otel-service-name': 'bermd-a',
    'otel-traces-sampler': 'traceidratio',
    'otel-traces-sampler-arg': '0.5',
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const rows = SETTINGS as readonly Setting[];

/** A value of a number's kind unlike its row's default: 37 s (37 min where the row's least is more), 128 KiB, 1 (a count a harness may always have). */
function sample(row: Setting): { text: string; value: number | boolean } | undefined {
  switch (row.kind) {
    case 'duration':
      return (row.min ?? 0) > 37_000 ? { text: '37m', value: 37 * 60_000 } : { text: '37s', value: 37_000 };
    case 'size':
      return { text: '128K', value: 128 * 1024 };
    case 'count':
    case 'whole':
      return { text: '1', value: 1 };
    case 'boolean':
      return { text: String(row.default !== true), value: row.default !== true };
    case 'switch':
      return { text: '', value: true };
    default:
      return undefined;
  }
}

/** The arguments that give `row` a value of its own (and what it needs beside it). */
function argsFor(row: Setting): string[] {
  const own = sample(row);
  const text = own?.text ?? texts[row.flag];
  if (text === undefined) throw new Error(`--${row.flag} (${row.kind}): the settings test has no value for it`);
  const args = row.kind === 'switch' ? [`--${row.flag}`] : [`--${row.flag}`, text];
  if (row.storeOnly) args.push('--store', texts.store!);
  // A worker count must stay above the per-harness limit, and a count of 1 above none.
  if (row.flag === 'workers') args.push('--max-concurrency', '1', '--workers', '2');
  if (row.flag === 'serve') args.push('--http-proxy', texts['http-proxy']!);
  // The resource server's flags go together: the issuer and the resource each need the other.
  if (row.flag.startsWith('oauth-') || row.flag === 'resource')
    for (const flag of ['oauth-issuer', 'resource']) if (row.flag !== flag) args.push(`--${flag}`, texts[flag]!);
  return args;
}

describe('every setting is one row that every consumer reads', () => {
  it("bermd's parser reads each row's flag into the option named by its code (or limits, by its wire name)", async () => {
    const base = (await parseOptions([], { XDG_STATE_HOME: dir })) as unknown as Record<string, unknown>;
    for (const row of rows) {
      const options = (await parseOptions(argsFor(row), { XDG_STATE_HOME: dir })) as unknown as Record<string, unknown>;
      const read = (o: Record<string, unknown>): unknown => {
        if (row.harness !== undefined) return (o.limits as Record<string, unknown>)[row.harness.wire];
        if (row.flag === 'listen') return `${o.host}:${o.port}`;
        if (row.flag === 'metrics-listen') {
          const at = o.metricsListen as { host: string; port: number } | undefined;
          return at === undefined ? undefined : `${at.host}:${at.port}`;
        }
        if (row.flag === 'token-file') return o.token;
        return o[row.code];
      };
      expect(read(options), `--${row.flag}`).not.toEqual(read(base));
      const own = sample(row);
      if (own !== undefined && row.flag !== 'workers') expect(read(options), `--${row.flag}`).toEqual(own.value);
      // A row's default is what the parser gives without its flag.
      if (typeof row.default !== 'object' && row.default !== undefined && row.flag !== 'listen')
        expect(read(base), `--${row.flag}'s default`).toEqual(row.default);
    }
  });

  it("bermd's --help lists each row's flag with the default the parser uses, and refuses a bad value in the row's words", async () => {
    const lines = USAGE.split('\n');
    for (const row of rows) {
      const line = lines.find((l) => l.startsWith(`  --${row.flag} `));
      expect(line, `--${row.flag} in --help`).toBeDefined();
      expect(line).toContain(row.help.split('\n')[0]);
      const printed = printDefault(row);
      if (printed !== undefined && row.kind !== 'switch') expect(line).toContain(`default ${printed})`);
      expect(USAGE.split('\n\n')[0]).toContain(`[--${row.flag}`);
      if (sample(row) !== undefined && row.kind !== 'switch') {
        const refused = readSettingText(row, `--${row.flag}`, 'x1');
        expect(refused, `--${row.flag} x1`).toHaveProperty('refused');
        await expect(parseOptions([`--${row.flag}`, 'x1', ...(row.storeOnly ? ['--store', texts.store!] : [])])).rejects.toThrow(
          (refused as { refused: string }).refused,
        );
      }
    }
  });

  it('the deploy query carries each per-harness row under its wire name, and the schema and messages name it', () => {
    for (const row of HARNESS_SETTINGS) {
      const own = sample(row)!;
      const query = encodeDeployQuery({ [row.code]: own.text });
      expect(Object.fromEntries(new URLSearchParams(query))).toEqual({ [row.harness.wire]: own.text });
      expect(decodeDeployQuery({ [row.harness.wire]: own.text }).limits).toEqual({ [row.harness.wire]: own.value });
      expect(DEPLOY_PARAMS).toContain(row.harness.wire);
      expect(Object.keys(DEPLOY_QUERY_SCHEMA.properties)).toContain(row.harness.wire);
      expect(() => decodeDeployQuery({ [row.harness.wire]: 'x1' })).toThrow(`${row.harness.wire} x1: `);
    }
  });

  it('stored bindings are read under each wire name, and under the name stored data had before', () => {
    for (const { harness } of HARNESS_SETTINGS as readonly Setting[]) {
      const { wire, legacy } = harness!;
      expect(decodeBindings({ [wire]: 5 })).toEqual({ [wire]: 5 });
      if (legacy !== undefined) {
        expect(decodeBindings({ [legacy]: 6 })).toEqual({ [wire]: 6 });
        // Written now, the wire name is the one read when both are there.
        expect(decodeBindings({ [legacy]: 6, [wire]: 7 })).toEqual({ [wire]: 7 });
      }
    }
  });

  it("crab deploy has a flag for each per-harness row (in oclif's manifest too), reading it as the deploy query does", async () => {
    const manifest = JSON.parse(await readFile(new URL('../packages/cli/oclif.manifest.json', import.meta.url), 'utf8')) as {
      commands: Record<string, { flags: Record<string, unknown> }>;
    };
    for (const row of HARNESS_SETTINGS) {
      const flag = (Deploy.flags as unknown as Record<string, { parse: (text: string, ctx: unknown, opts: unknown) => Promise<unknown> }>)[
        row.flag
      ];
      expect(flag, `crab deploy --${row.flag}`).toBeDefined();
      expect(manifest.commands.deploy!.flags).toHaveProperty(row.flag);
      const own = sample(row)!;
      expect(await flag!.parse(own.text, {}, {})).toEqual(own.value);
      await expect(flag!.parse('x1', {}, {})).rejects.toThrow(`${row.harness.wire} x1: `);
    }
  });

  it("the README's table of bounds is what the rows write (scripts/settings-readme.js), one line per bound", async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(settingsTable());
    for (const row of rows.filter((r) => r.bound !== undefined)) expect(settingsTable()).toContain(`| ${row.bound} |`);
  });

  it("the rooms' own defaults are their rows'", () => {
    const defaults: Record<string, number> = {
      'max-sessions': MAX_SESSIONS,
      'max-listens': MAX_LISTENS,
      'max-event-streams': MAX_EVENT_STREAMS,
      'mcp-max-body': MAX_MCP_BODY,
      'session-idle': SESSION_IDLE_MS,
      'http-max-body': DEFAULT_HTTP_MAX_BODY,
    };
    for (const [flag, value] of Object.entries(defaults)) expect(rows.find((r) => r.flag === flag)?.default, `--${flag}`).toBe(value);
  });
});
