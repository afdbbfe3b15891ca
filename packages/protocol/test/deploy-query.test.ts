// The deploy query, encoded as the client sends it and decoded as the daemon reads it.
import { describe, expect, it } from 'vitest';
import { decodeDeployQuery, encodeDeployQuery, type ParsedQuery } from '../dist/deploy-query.js';
import { ApiError } from '../dist/errors.js';

/** What a server's query parser makes of `?...`: repeated parameters become lists. */
function parsed(search: string): ParsedQuery {
  const out: ParsedQuery = {};
  for (const [key, value] of new URLSearchParams(search)) {
    const was = out[key];
    out[key] = was === undefined ? value : Array.isArray(was) ? [...was, value] : [was, value];
  }
  return out;
}

function refusal(query: ParsedQuery): ApiError {
  try {
    decodeDeployQuery(query);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the query to be refused');
}

describe('the deploy query', () => {
  it('decodes what the client encodes', () => {
    const search = encodeDeployQuery({
      force: true,
      dryRun: true,
      callTimeoutMs: 1500,
      maxMemoryBytes: '16M',
      maxResultBytes: 4096,
      maxConcurrency: 2,
      grants: ['secret=a', 'berm.http.fetch=api.example.com'],
    });
    expect(search.startsWith('?')).toBe(true);
    expect(decodeDeployQuery(parsed(search))).toEqual({
      force: true,
      dryRun: true,
      limits: { timeout: 1500, max_memory: 16 * 1024 * 1024, max_result_size: 4096, max_concurrency: 2 },
      grants: ['secret=a', 'berm.http.fetch=api.example.com'],
    });
    expect(encodeDeployQuery({})).toBe('');
    expect(decodeDeployQuery({})).toEqual({ force: false, dryRun: false, limits: {} });
    expect(decodeDeployQuery({ grant: 'none' }).grants).toEqual(['none']);
  });

  it('reads force and dry-run as true or false', () => {
    for (const yes of ['', 'true', '1']) expect(decodeDeployQuery({ force: yes }).force).toBe(true);
    for (const no of ['false', '0']) expect(decodeDeployQuery({ force: no }).force).toBe(false);
    for (const yes of ['', 'true', '1']) expect(decodeDeployQuery({ 'dry-run': yes })).toMatchObject({ force: false, dryRun: true });
    for (const no of ['false', '0']) expect(decodeDeployQuery({ 'dry-run': no }).dryRun).toBe(false);
    expect(refusal({ force: 'maybe' })).toMatchObject({
      code: 'bad-request',
      status: 400,
      message: 'query parameter force=maybe: expected true or false',
    });
    expect(refusal({ 'dry-run': 'maybe' })).toMatchObject({
      code: 'bad-request',
      message: 'query parameter dry-run=maybe: expected true or false',
    });
    // The spelling is the flag's, `crab deploy --dry-run`: an underscore is refused like any unknown parameter.
    expect(refusal({ dry_run: 'true' })).toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining('unknown query parameter dry_run'),
    });
  });

  it('refuses an unknown parameter, so a misspelt grant never deploys with everything granted', () => {
    expect(refusal(parsed('grnt=secret%3Da'))).toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining('unknown query parameter grnt'),
    });
  });

  it('refuses a parameter given twice, and limits outside the grammar or below their bounds', () => {
    expect(refusal(parsed('timeout=1s&timeout=2s'))).toMatchObject({
      code: 'bad-request',
      message: 'query parameter timeout is given 2 times; give it once',
    });
    expect(refusal({ timeout: 'soon' })).toMatchObject({ code: 'bad-limit', details: { parameter: 'timeout' } });
    expect(refusal({ max_memory: '1K' })).toMatchObject({
      code: 'bad-limit',
      message: 'max_memory 1K: must be at least 64K (one wasm page)',
    });
    expect(refusal({ max_result_size: '0' })).toMatchObject({ code: 'bad-limit', details: { parameter: 'max_result_size' } });
    expect(refusal({ max_concurrency: '0' })).toMatchObject({ code: 'bad-limit', message: 'max_concurrency 0: must be at least 1' });
    expect(refusal({ max_concurrency: 'two' })).toMatchObject({
      code: 'bad-limit',
      message: 'max_concurrency two: expected a whole number such as 4',
      details: { parameter: 'max_concurrency' },
    });
  });
});
