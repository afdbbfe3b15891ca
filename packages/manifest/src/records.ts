import { ManifestError } from './errors.js';
import { SECTION_NAME } from './writer.js';

/** One JSON value of the `.berm.abi` stream and the byte offset where it starts. */
export interface StreamRecord {
  offset: number;
  value: unknown;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** JSON whitespace, and NUL, which linkers pad with. */
function isSeparator(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x00;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Splits the stream into its JSON values. Each value's extent is found on the bytes (brackets
 * counted outside strings) so its start offset is known; the value itself is then decoded and
 * parsed on its own, and any error names the byte offset in the stream.
 */
export function parseRecords(stream: Uint8Array): StreamRecord[] {
  const records: StreamRecord[] = [];
  let pos = 0;
  while (pos < stream.length) {
    if (isSeparator(stream[pos]!)) {
      pos++;
      continue;
    }
    const start = pos;
    if (stream[start] === 0xef && stream[start + 1] === 0xbb && stream[start + 2] === 0xbf) {
      // Said plainly: the parser's own message would quote an invisible character.
      throw badRecord(
        start,
        `a UTF-8 byte order mark (EF BB BF) at byte ${start} of the ${SECTION_NAME} stream: only JSON whitespace and NUL may come between records`,
      );
    }
    const end = valueEnd(stream, start);
    if (end < 0) {
      throw badRecord(
        start,
        `the record at byte ${start} of the ${SECTION_NAME} stream is not closed before the stream ends (byte ${stream.length})`,
      );
    }
    records.push({ offset: start, value: parseValue(stream, start, end) });
    pos = end;
  }
  return records;
}

/**
 * Parses the record stream and merges the records into one (unvalidated) manifest object: the
 * program record, with `events` = its own `events` followed by each event record's event in order.
 *
 * A stream without a program record is `bad-record` at offset 0 rather than `no-manifest`: the
 * section is there, and what is wrong is its content.
 */
export function mergeRecords(stream: Uint8Array): unknown {
  let program: { offset: number; value: Record<string, unknown> } | undefined;
  const events: unknown[] = [];
  for (const { offset, value } of parseRecords(stream)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw badRecord(offset, `the record at byte ${offset} of the ${SECTION_NAME} stream is ${describe(value)}, not an object`);
    }
    const record = value as Record<string, unknown>;
    if (Object.hasOwn(record, 'abi_version')) {
      if (program) {
        throw badRecord(
          offset,
          `the record at byte ${offset} of the ${SECTION_NAME} stream is a second program record (the first is at byte ${program.offset})`,
        );
      }
      program = { offset, value: record };
    } else if (Object.hasOwn(record, 'event') && Object.keys(record).length === 1) {
      // Caught here rather than by validation, which could only point at /events/N of the merge,
      // not at the record in the section.
      if (typeof record.event !== 'object' || record.event === null || Array.isArray(record.event)) {
        throw badRecord(
          offset,
          `the event record at byte ${offset} of the ${SECTION_NAME} stream holds ${describe(record.event)}, not an event object`,
        );
      }
      events.push(record.event);
    } else {
      throw badRecord(
        offset,
        `the record at byte ${offset} of the ${SECTION_NAME} stream is neither a program record (with "abi_version") nor an event record ({"event": ...})`,
      );
    }
  }
  if (!program) {
    throw badRecord(
      0,
      `the ${SECTION_NAME} stream (${stream.length} bytes from byte 0) holds no program record (an object with "abi_version")`,
    );
  }
  const merged: Record<string, unknown> = { ...program.value };
  const own = program.value.events;
  // A program `events` that is not an array is left as it is, for validation to point at.
  if (events.length > 0 && (own === undefined || Array.isArray(own))) {
    merged.events = [...((own as unknown[] | undefined) ?? []), ...events];
  }
  return merged;
}

/** The end (exclusive) of the JSON value starting at `start`, or -1 when the stream ends first. */
function valueEnd(bytes: Uint8Array, start: number): number {
  const first = bytes[start]!;
  if (first === QUOTE) return stringEnd(bytes, start);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A scalar (or garbage) runs to the next separator; JSON.parse judges it.
    let pos = start;
    while (pos < bytes.length && !isSeparator(bytes[pos]!)) pos++;
    return pos;
  }
  let depth = 0;
  let pos = start;
  while (pos < bytes.length) {
    const byte = bytes[pos]!;
    if (byte === QUOTE) {
      pos = stringEnd(bytes, pos);
      if (pos < 0) return -1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return pos + 1;
    }
    pos++;
  }
  return -1;
}

/** The end (exclusive) of the string whose opening quote is at `start`, or -1. */
function stringEnd(bytes: Uint8Array, start: number): number {
  let pos = start + 1;
  while (pos < bytes.length) {
    const byte = bytes[pos]!;
    if (byte === BACKSLASH) pos += 2;
    else if (byte === QUOTE) return pos + 1;
    else pos++;
  }
  return -1;
}

function parseValue(stream: Uint8Array, start: number, end: number): unknown {
  let text: string;
  try {
    text = utf8.decode(stream.subarray(start, end));
  } catch {
    const bad = start + firstInvalidUtf8(stream.subarray(start, end));
    throw badRecord(bad, `invalid UTF-8 at byte ${bad} of the ${SECTION_NAME} stream (in the record at byte ${start})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    // The parser quotes the record, line breaks and all; the message stays one line.
    const detail = e instanceof Error ? `: ${oneLine(e.message)}` : '';
    throw badRecord(start, `the record at byte ${start} of the ${SECTION_NAME} stream is not valid JSON${detail}`);
  }
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let pos = 0;
  while (pos < bytes.length) {
    const b = bytes[pos]!;
    let need: number;
    let min: number;
    if (b < 0x80) {
      pos++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return pos;
    }
    let cp = b & (0x3f >> need);
    for (let i = 1; i <= need; i++) {
      const c = bytes[pos + i];
      if (c === undefined || (c & 0xc0) !== 0x80) return pos;
      cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return pos;
    pos += need + 1;
  }
  return bytes.length;
}

function oneLine(text: string): string {
  return text.replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function badRecord(offset: number, message: string): ManifestError {
  return new ManifestError('bad-record', message, { offset });
}
