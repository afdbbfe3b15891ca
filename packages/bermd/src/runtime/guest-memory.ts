/**
 * The guest ABI's data path (spec §4): bytes go in through the guest's own `berm_alloc`, and come back
 * as one i64 packing `(ptr << 32) | len`. Every read is bounds-checked against the memory as it is now,
 * because a guest may grow (and so replace) its buffer at any call.
 */

/** A guest's side of the data path, set once its instance exists. */
export interface GuestPort {
  memory: WebAssembly.Memory;
  alloc: (len: number) => unknown;
}

/** The guest broke the ABI in a way that is neither a trap nor a bad result (e.g. `berm_alloc` answered nonsense). */
export class AbiViolation extends Error {
  override name = 'AbiViolation';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function pack(ptr: number, len: number): bigint {
  return (BigInt(ptr >>> 0) << 32n) | BigInt(len >>> 0);
}

export function unpack(packed: bigint): { ptr: number; len: number } {
  return { ptr: Number((packed >> 32n) & 0xffffffffn), len: Number(packed & 0xffffffffn) };
}

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Copies `bytes` into memory the guest allocated for them; returns the pointer. May throw the guest's trap. */
export function writeGuest(guest: GuestPort, bytes: Uint8Array): number {
  const ptr = guest.alloc(bytes.length);
  if (typeof ptr !== 'number') throw new AbiViolation('berm_alloc did not return an i32');
  const at = ptr >>> 0;
  const view = new Uint8Array(guest.memory.buffer);
  if (at + bytes.length > view.length) {
    throw new AbiViolation(`berm_alloc(${bytes.length}) returned ${at}, which does not leave room inside the ${view.length}-byte memory`);
  }
  view.set(bytes, at);
  return at;
}

/** The guest's bytes at `[ptr, ptr + len)`, copied out; undefined when the range is outside its memory. */
export function readGuest(guest: GuestPort, ptr: number, len: number): Uint8Array | undefined {
  const view = new Uint8Array(guest.memory.buffer);
  if (ptr + len > view.length) return undefined;
  return view.slice(ptr, ptr + len);
}

export function memorySize(guest: GuestPort): number {
  return guest.memory.buffer.byteLength;
}

/** Decodes strict UTF-8 JSON; throws a message-carrying Error saying which of the two it is not. */
export function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new Error('is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`is not JSON (${(e as Error).message})`);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
