// What a principal may learn of the deployed set on /mcp, in one process: which answer a tool name gets
// (a separator that harness names may hold makes a name's harness ambiguous, and the answer must still
// not depend on what the principal cannot see), which harnesses a deploy changed the listing of, and a
// listen stream's frames as its principal reads them. The same behaviour over HTTP, with real clients,
// is mcp-scopes.test.ts.
import { describe, expect, it } from 'vitest';
import { Principal } from '../dist/auth/index.js';
import { callAccess } from '../dist/mcp/access.js';
import { ToolCatalog } from '../dist/mcp/index.js';
import { changeEvent, ListenFilter } from '../dist/mcp/listen-filter.js';
import { sampleManifest } from '../../../test/helpers/harness.js';

/** A catalog under `separator` with each harness's tools (echo-like, no usage) deployed. */
function catalogOf(separator: string, harnesses: Record<string, string[]>): ToolCatalog {
  const catalog = new ToolCatalog(separator);
  const [tool] = sampleManifest().tools;
  for (const [harness, tools] of Object.entries(harnesses)) {
    catalog.set(catalog.prepare(harness, sampleManifest({ usage: '', tools: tools.map((name) => ({ ...tool!, name })) })));
  }
  return catalog;
}

/** What `callAccess` answers, as one comparable value. */
function answer(catalog: ToolCatalog, principal: Principal | undefined, name: string): string {
  const access = callAccess(catalog, principal, name);
  if ('tool' in access) return `runs ${access.tool.harness}/${access.tool.tool}`;
  return 'missing' in access ? `403 ${access.missing}` : 'unknown';
}

describe('a tools/call name, for a principal that may call some harnesses', () => {
  it('with the default separator: runs its own, names berm:call:NAME for any other harness part, deployed or not', () => {
    const catalog = catalogOf('.', { a: ['x'], b: ['x'] });
    const alice = new Principal('alice', ['berm:call:a']);
    expect(answer(catalog, alice, 'a.x')).toBe('runs a/x');
    expect(answer(catalog, alice, 'a.y')).toBe('unknown');
    expect(answer(catalog, alice, 'b.x')).toBe('403 berm:call:b');
    expect(answer(catalog, alice, 'b.y')).toBe('403 berm:call:b');
    expect(answer(catalog, alice, 'ghost.x')).toBe('403 berm:call:ghost');
    // No harness name holds a dot: only the part before the first names one.
    expect(answer(catalog, alice, 'ghost.x.y')).toBe('403 berm:call:ghost');
    expect(answer(catalog, alice, 'nothing')).toBe('unknown');
    expect(answer(catalog, alice, 'no!name.x')).toBe('unknown');
    // berm:call, and the daemon's own view, see everything: only what is not deployed is unknown.
    for (const everyone of [new Principal('carol', ['berm:call']), undefined]) {
      expect(answer(catalog, everyone, 'b.x')).toBe('runs b/x');
      expect(answer(catalog, everyone, 'ghost.x')).toBe('unknown');
    }
  });

  it('with a separator harness names may hold: the same answer for a hidden tool and a name that is no tool', () => {
    // `a`'s tool `b_x` is listed as a_b_x; `a_c`'s tool `y` as a_c_y.
    const catalog = catalogOf('_', { a: ['b_x'], a_c: ['y'] });
    const alice = new Principal('alice', ['berm:call:a']);
    expect(answer(catalog, alice, 'a_b_x')).toBe('runs a/b_x');
    expect(answer(catalog, alice, 'a_c_y')).toBe('403 berm:call:a_c');
    expect(answer(catalog, alice, 'a_c_z')).toBe('403 berm:call:a_c');
    expect(answer(catalog, alice, 'a_b_z')).toBe('403 berm:call:a_b');
    // Every harness the name could be of is hers: it is simply not a tool.
    expect(answer(catalog, alice, 'a_zz')).toBe('unknown');
    // Of nothing deployed, every possible harness is named: the client may ask for any of them.
    expect(answer(catalog, alice, 'q_r_s')).toBe('403 berm:call:q berm:call:q_r');
  });
});

describe("the catalog's changed harnesses", () => {
  it('are the harness deployed or removed, and those whose listing its change touched', () => {
    const catalog = new ToolCatalog('.');
    catalog.set(catalog.prepare('front', sampleManifest({ deps: { programs: ['back'], syscalls: {}, secrets: [] } })));
    expect([...catalog.takeChanged()]).toEqual(['front']);
    expect([...catalog.takeChanged()]).toEqual([]);
    // `back` leaves the machine: `front`, which calls it, is no longer a closed world.
    catalog.set(catalog.prepare('back', sampleManifest(), true));
    expect([...catalog.takeChanged()].sort()).toEqual(['back', 'front']);
    catalog.set(catalog.prepare('other', sampleManifest()));
    expect([...catalog.takeChanged()]).toEqual(['other']);
    catalog.delete('back');
    expect([...catalog.takeChanged()].sort()).toEqual(['back', 'front']);
  });
});

describe('a listen stream, filtered for its principal', () => {
  const frame = (message: unknown): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  const change = (harnesses: string[], id: number): Record<string, unknown> => {
    const { params } = changeEvent('tools_list_changed', new Set(harnesses)) as { params: { _meta: Record<string, unknown> } };
    return {
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { ...params._meta, 'io.modelcontextprotocol/subscriptionId': id } },
    };
  };
  const ack = frame({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { notifications: { toolsListChanged: true } },
  });

  it('drops the changes of harnesses it may not call, and takes the names out of the others, however the bytes arrive', () => {
    const stream = [ack, ': keepalive\n\n', frame(change(['beta'], 4)), frame(change(['delta', 'alpha'], 4)), ': keepalive\n\n'].join('');
    const bytes = new TextEncoder().encode(stream);
    for (const size of [1, 7, 64, bytes.length]) {
      const filter = new ListenFilter(new Principal('alice', ['berm:call:alpha']));
      let out = '';
      for (let at = 0; at < bytes.length; at += size) out += filter.pass(bytes.subarray(at, at + size));
      expect(out, `chunks of ${size}`).toBe(
        [
          ack,
          ': keepalive\n\n',
          frame({
            jsonrpc: '2.0',
            method: 'notifications/tools/list_changed',
            params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 4 } },
          }),
          ': keepalive\n\n',
        ].join(''),
      );
    }
  });
});
