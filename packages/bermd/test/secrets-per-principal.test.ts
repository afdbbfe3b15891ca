// The secrets file's forms for principals, read piece by piece: a value limited to named principals, one
// value per principal, what a call for no principal gets, the shapes refused (each message naming the
// secret and never quoting a value), what a rotation reports, and the log's redaction of every value.
import { describe, expect, it } from 'vitest';
import { Secrets, SecretsFileError } from 'bermd';
import { logSink } from '../dist/log.js';

const ALICE = 'ghp-alice-3f9c-value';
const BOB = 'ghp-bob-77a1-value';
const DEPLOY = 'deploy-key-0b5e-value';
const PLAIN = 'plain-c41d-value';

const FILE = {
  github: { per_principal: { alice: ALICE, bob: BOB } },
  deploy: { value: DEPLOY, principals: ['ci', 'alice'] },
  plain: PLAIN,
  shopkey: { per_principal: { alice: 'shop-alice-value' }, harnesses: ['shop'] },
};

function refusalOf(text: string): string {
  try {
    Secrets.parse(text);
  } catch (e) {
    if (e instanceof SecretsFileError) return e.message;
    throw e;
  }
  throw new Error(`expected ${text} to be refused`);
}

describe('secrets for principals', () => {
  const secrets = Secrets.parse(JSON.stringify(FILE));

  it('gives each principal its own value of a per-principal secret, and none to a principal without one', () => {
    expect(secrets.lookup('github', 'h', 'alice')).toBe(ALICE);
    expect(secrets.lookup('github', 'h', 'bob')).toBe(BOB);
    expect(secrets.lookup('github', 'h', 'carol')).toEqual({ unavailable: 'not-for-principal' });
  });

  it('gives a limited secret to the principals it lists only', () => {
    expect(secrets.lookup('deploy', 'h', 'ci')).toBe(DEPLOY);
    expect(secrets.lookup('deploy', 'h', 'alice')).toBe(DEPLOY);
    expect(secrets.lookup('deploy', 'h', 'bob')).toEqual({ unavailable: 'not-for-principal' });
  });

  it("gives a call for no principal (bermd's own) the plain secrets, and none limited to principals", () => {
    expect(secrets.lookup('plain', 'h')).toBe(PLAIN);
    expect(secrets.lookup('plain', 'h', 'anyone')).toBe(PLAIN);
    expect(secrets.lookup('github', 'h')).toEqual({ unavailable: 'no-principal' });
    expect(secrets.lookup('deploy', 'h')).toEqual({ unavailable: 'no-principal' });
  });

  it('applies the harness a call entered through before the principal', () => {
    expect(secrets.lookup('shopkey', 'shop', 'alice')).toBe('shop-alice-value');
    expect(secrets.lookup('shopkey', 'other', 'alice')).toEqual({ unavailable: 'out-of-scope' });
    expect(secrets.lookup('shopkey', 'other', 'bob')).toEqual({ unavailable: 'out-of-scope' });
  });

  it("counts a secret for principals as held for a deploy's notice, which cannot know who will call", () => {
    expect(secrets.availableTo('github', 'h')).toBe(true);
    expect(secrets.availableTo('deploy', 'h')).toBe(true);
    expect(secrets.availableTo('shopkey', 'shop')).toBe(true);
    expect(secrets.availableTo('shopkey', 'other')).toBe(false);
    expect(secrets.availableTo('absent', 'h')).toBe(false);
  });

  it('refuses each bad shape with a message naming the secret and what to write, never quoting a value', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ s: { value: 'v-1', per_principal: { a: 'v-2' } } }, /secret s has both "value" and "per_principal"/],
      [{ s: { value: 'v-1', principals: [] } }, /secret s: "principals" must be a non-empty list of principal names/],
      [{ s: { value: 'v-1', principals: 'alice' } }, /secret s: "principals" must be a non-empty list/],
      [{ s: { value: 'v-1', principals: ['alice', 7] } }, /secret s: "principals" must be a non-empty list/],
      [{ s: { value: 'v-1', principals: ['bad\nname'] } }, /secret s: "principals" must be a non-empty list/],
      [{ s: { per_principal: {} } }, /secret s: "per_principal" must be a non-empty object of principal name to value/],
      [{ s: { per_principal: ['v-1'] } }, /secret s: "per_principal" must be a non-empty object/],
      [{ s: { per_principal: { alice: 42 } } }, /secret s: "per_principal": the value for alice must be a non-empty string/],
      [{ s: { per_principal: { alice: '' } } }, /the value for alice must be a non-empty string/],
      [{ s: { per_principal: { '': 'v-1' } } }, /secret s: "per_principal" names a principal that is empty/],
      [{ s: { per_principal: { alice: 'v-1' }, principals: ['alice'] } }, /"per_principal" already names the principals it is for/],
      [{ s: { principals: ['alice'] } }, /secret s needs "value" or "per_principal"/],
      [{ s: { value: 42 } }, /secret s needs a non-empty string value/],
      [{ s: { value: 'v-1', owner: 'x' } }, /secret s has unknown member "owner"; only value, per_principal, principals and harnesses/],
      [{ s: { per_principal: { alice: 'v-1' }, harnesses: ['no.dots'] } }, /secret s: "harnesses" must be a list of harness names/],
      [{ s: ['v-1'] }, /secret s must be one of "value", \{"value": .*\{"per_principal"/],
    ];
    for (const [file, why] of cases) {
      const message = refusalOf(JSON.stringify(file));
      expect(message, JSON.stringify(file)).toMatch(why);
      expect(message, JSON.stringify(file)).not.toMatch(/v-1|v-2/);
    }
  });

  it('says, on a rotation, which names were added, removed and changed, a change in who may use one included', () => {
    const held = Secrets.parse(JSON.stringify(FILE));
    const next = Secrets.parse(
      JSON.stringify({
        // bob's value rotated
        github: { per_principal: { alice: ALICE, bob: 'ghp-bob-rotated' } },
        // the same value for other principals
        deploy: { value: DEPLOY, principals: ['ci'] },
        plain: PLAIN,
        // the same value, now for one principal only
        shopkey: { per_principal: { alice: 'shop-alice-value', bob: 'shop-bob-value' }, harnesses: ['shop'] },
        fresh: { value: 'fresh-value', principals: ['ci'] },
      }),
    );
    expect(held.replace(next)).toEqual({ added: ['fresh'], removed: [], changed: ['deploy', 'github', 'shopkey'] });
    expect(held.lookup('github', 'h', 'bob')).toBe('ghp-bob-rotated');
    expect(held.lookup('deploy', 'h', 'alice')).toEqual({ unavailable: 'not-for-principal' });
    // A plain secret that becomes one for principals changes too, and so does the reverse.
    const plainToPerPrincipal = Secrets.parse(JSON.stringify({ k: 'k-value' }));
    expect(plainToPerPrincipal.replace(Secrets.parse(JSON.stringify({ k: { per_principal: { ci: 'k-value' } } })))).toEqual({
      added: [],
      removed: [],
      changed: ['k'],
    });
    expect(plainToPerPrincipal.replace(Secrets.parse(JSON.stringify({ k: { value: 'k-value', principals: ['ci'] } })))).toEqual({
      added: [],
      removed: [],
      changed: ['k'],
    });
    const unchanged = Secrets.parse(JSON.stringify(FILE));
    expect(unchanged.replace(Secrets.parse(JSON.stringify(FILE)))).toEqual({ added: [], removed: [], changed: [] });
  });

  it("redacts every principal's value, and keeps redacting the values a rotation dropped", () => {
    const held = Secrets.parse(JSON.stringify(FILE));
    const lines: string[] = [];
    const sink = logSink({ write: (l: string) => lines.push(l) }, held);
    sink.write(`${JSON.stringify({ msg: `sent ${ALICE}, ${BOB} and ${DEPLOY}` })}\n`);
    held.replace(Secrets.parse(JSON.stringify({ github: { per_principal: { alice: 'ghp-alice-next' } } })));
    sink.write(`${JSON.stringify({ msg: `then ${ALICE}, ${BOB}, ${DEPLOY} and ghp-alice-next` })}\n`);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual([
      'sent [secret:github], [secret:github] and [secret:deploy]',
      'then [secret:github], [secret:github], [secret:deploy] and [secret:github]',
    ]);
  });
});
