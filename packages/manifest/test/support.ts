// Shared by the manifest reader's tests: how to expect a typed error and how to assemble images by hand.
import { expect } from 'vitest';
import { ManifestError, customSection, type ManifestErrorCode } from '@berm/manifest';

export const encoder = new TextEncoder();

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `module` with one more `.berm.abi` custom section holding `payload` (text or raw bytes) appended. */
export function withSection(module: Uint8Array, payload: string | Uint8Array, name = '.berm.abi'): Uint8Array {
  return concat(module, customSection(name, typeof payload === 'string' ? encoder.encode(payload) : payload));
}

/** Runs `fn` and returns the ManifestError it throws, failing the test on success or on any other error. */
export function manifestError(fn: () => unknown): ManifestError {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(ManifestError);
  return thrown as ManifestError;
}

export async function manifestErrorAsync(fn: () => Promise<unknown>): Promise<ManifestError> {
  let thrown: unknown;
  try {
    await fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(ManifestError);
  return thrown as ManifestError;
}

export function expectCode(error: ManifestError, code: ManifestErrorCode): void {
  expect({ code: error.code, message: error.message }).toMatchObject({ code });
}
