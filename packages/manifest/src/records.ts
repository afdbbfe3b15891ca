/** Parses the record stream and merges the records into one (unvalidated) manifest object. */
export function mergeRecords(_stream: Uint8Array): unknown {
  throw new Error('not implemented');
}
