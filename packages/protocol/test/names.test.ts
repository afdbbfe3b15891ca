import { describe, expect, it } from 'vitest';
import { badHarnessNameMessage, isHarnessName } from '../dist/names.js';
import { ApiError, ERROR_STATUS } from '../dist/errors.js';

describe('the harness name rule', () => {
  it('takes 1 to 64 letters, digits, _ and -, and nothing with a dot or a slash', () => {
    for (const good of ['echo', 'a', 'x'.repeat(64), 'my_tool-2']) expect(isHarnessName(good), good).toBe(true);
    for (const bad of ['', 'a.b', '..', 'x'.repeat(65), 'a/b', 'café', ' a']) expect(isHarnessName(bad), bad).toBe(false);
    expect(badHarnessNameMessage('a.b')).toContain('no dots');
  });
});

describe('ApiError', () => {
  it('answers with the status of its code and a body whose details never override the code or message', () => {
    const e = new ApiError('breaks-callers', 'no', { code: 'other', message: 'other', name: 'h' });
    expect(e.status).toBe(ERROR_STATUS['breaks-callers']);
    expect(e.toBody()).toEqual({ error: { code: 'breaks-callers', message: 'no', name: 'h' } });
  });
});
