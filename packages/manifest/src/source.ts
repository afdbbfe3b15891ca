import { ManifestError } from './errors.js';

/**
 * The image readers are written once, as generators that yield the byte ranges they need and
 * receive those bytes back. A driver answers the requests: `runOnBytes` from memory, `runOnSource`
 * from anything with positioned async reads (a file). The format logic never knows which.
 */
export interface ReadRequest {
  offset: number;
  length: number;
}

export type Reader<T> = Generator<ReadRequest, T, Uint8Array>;

/**
 * Asks the driver for `length` bytes at `offset`. Readers only ask for ranges inside the size they
 * were given; a shorter answer means the source shrank under us and is reported as truncation.
 */
export function* read(offset: number, length: number): Reader<Uint8Array> {
  const bytes: Uint8Array = yield { offset, length };
  if (bytes.length < length) {
    throw new ManifestError(
      'truncated',
      `the image ends at byte ${offset + bytes.length}, inside ${length} bytes read from byte ${offset}`,
      {
        offset: offset + bytes.length,
      },
    );
  }
  return bytes;
}

/** Runs a reader over bytes in memory; every answer is a view, nothing is copied. */
export function runOnBytes<T>(reader: Reader<T>, bytes: Uint8Array): T {
  let step = reader.next();
  while (!step.done) {
    const { offset, length } = step.value;
    step = reader.next(bytes.subarray(offset, offset + length));
  }
  return step.value;
}

/** Anything that can answer positioned reads: `read` may return fewer bytes only at the end of the source. */
export interface ByteSource {
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Runs a reader over an asynchronous source, one request at a time. */
export async function runOnSource<T>(reader: Reader<T>, source: ByteSource): Promise<T> {
  let step = reader.next();
  while (!step.done) {
    const { offset, length } = step.value;
    step = reader.next(await source.read(offset, length));
  }
  return step.value;
}
