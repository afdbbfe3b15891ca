import { describe, expect, it } from 'vitest';
import { ManifestError } from '@berm/manifest';
import { CLIENT_ERROR_CODES } from '@berm/client';
import { GUEST_ERROR_CODES } from '@berm/guest/build';
import { ERROR_STATUS } from '@berm/protocol';
import { CliError, EXIT, EXIT_CODES, describeFailure, exitCodeFor } from '@berm/cli';

describe('exitCodeFor', () => {
  it('maps every manifest reader code to bad input', () => {
    for (const code of ['not-an-image', 'component-not-supported', 'truncated', 'no-manifest', 'bad-record', 'invalid-manifest']) {
      expect(exitCodeFor(code), code).toBe(2);
    }
  });

  it('maps negative answers to 1, usage to 2 and an unreachable daemon to 3', () => {
    expect(exitCodeFor('breaks-found')).toBe(EXIT.negative);
    expect(exitCodeFor('breaks-callers')).toBe(1);
    expect(exitCodeFor('usage')).toBe(2);
    expect(exitCodeFor('file-not-found')).toBe(2);
    expect(exitCodeFor('daemon-unreachable')).toBe(3);
    // bermd answered, but the database it keeps its set in did not: a retry later may succeed.
    expect(exitCodeFor('store-unavailable', 503)).toBe(3);
  });

  it('falls back on the HTTP status for codes the table does not know', () => {
    expect(exitCodeFor('some-refusal', 422)).toBe(1);
    expect(exitCodeFor('some-conflict', 409)).toBe(1);
    expect(exitCodeFor('some-bad-request', 400)).toBe(2);
    expect(exitCodeFor('some-missing', 404)).toBe(2);
    expect(exitCodeFor('some-server-error', 500)).toBe(1);
    expect(exitCodeFor('internal')).toBe(1);
  });

  it('lets the table win over the status', () => {
    expect(exitCodeFor('breaks-callers', 400)).toBe(1);
  });

  it('has no code that would be read from the prototype', () => {
    expect(exitCodeFor('toString')).toBe(1);
    expect(Object.getPrototypeOf(EXIT_CODES)).toBe(Object.prototype);
  });
});

describe('the table and the codes of the client and the daemon', () => {
  it('lists every code the daemon answers with, each by what its status says', () => {
    // 404 is undeploy's negative answer; 503 is a daemon going away, as good as unreachable.
    const expected = (status: number): number =>
      status === 409 || status === 422 || status === 404 || status === 500 ? 1 : status === 503 ? 3 : 2;
    // A write's refusals say what to do as other exits do: change the key (bad input), try again later (as
    // a full line of calls, busy, says), or nothing will answer it again (410: refused, as a 409 is).
    const apart: Record<string, number> = { 'idempotency-key-reused': 2, 'in-progress': 3, 'result-not-kept': 1 };
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(Object.hasOwn(EXIT_CODES, code), `${code} is in the table`).toBe(true);
      expect([code, exitCodeFor(code)]).toEqual([code, apart[code] ?? expected(status)]);
    }
  });

  it("lists the client's own codes: bad input is 2, a daemon not reached is 3", () => {
    const expected: Record<string, number> = {
      'bad-url': 2,
      'bad-name': 2,
      'daemon-unreachable': 3,
      'connection-lost': 3,
      'unexpected-response': 3,
    };
    expect(Object.keys(expected).sort()).toEqual([...CLIENT_ERROR_CODES].sort());
    for (const code of CLIENT_ERROR_CODES) expect([code, exitCodeFor(code)]).toEqual([code, expected[code]]);
  });

  it("lists the build's codes and crab new's as bad input: compile errors exit 2", () => {
    for (const code of [...GUEST_ERROR_CODES, 'dir-not-empty']) {
      expect(Object.hasOwn(EXIT_CODES, code), `${code} is in the table`).toBe(true);
      expect([code, exitCodeFor(code)]).toEqual([code, 2]);
    }
  });
});

describe('describeFailure', () => {
  it('reads the status of a daemon answer a CliError restates, for codes the table does not list', () => {
    expect(describeFailure(new CliError('some-conflict', 'no', { status: 409 }), 'crab deploy').exit).toBe(1);
    expect(describeFailure(new CliError('some-bad-field', 'no', { status: 400 }), 'crab deploy').exit).toBe(2);
    expect(new CliError('x', 'y', { status: 422 }).status).toBe(422);
    expect(new CliError('x', 'y').status).toBeUndefined();
  });

  it('keeps the code, message and details of a CliError', () => {
    const f = describeFailure(new CliError('file-not-found', "cannot read 'x': no such file", { file: 'x' }), 'crab inspect');
    expect(f).toEqual({
      code: 'file-not-found',
      line: "cannot read 'x': no such file",
      json: { code: 'file-not-found', message: "cannot read 'x': no such file", file: 'x' },
      exit: 2,
    });
  });

  it('carries a ManifestError offset and path into the JSON', () => {
    const f = describeFailure(new ManifestError('truncated', 'cut short', { offset: 9 }), 'crab inspect');
    expect(f.json).toMatchObject({ code: 'truncated', message: 'cut short', offset: 9 });
    expect(f.exit).toBe(2);
  });

  it('uses the status of a daemon error the table does not list', () => {
    const err = Object.assign(new Error('image refused'), { code: 'missing-export', status: 422 });
    const f = describeFailure(err, 'crab deploy');
    expect(f.exit).toBe(1);
    expect(f.json).toEqual({ code: 'missing-export', message: 'image refused', status: 422 });
  });

  it('reports anything else as an internal failure', () => {
    const f = describeFailure('boom', 'crab');
    expect(f).toMatchObject({ code: 'internal', line: 'boom', exit: 1 });
  });
});
