import { describe, expect, it } from 'vitest';
import { Manifest } from '@berm/manifest';
import { wat2wasm } from '../../../test/helpers/wat.js';
import { concat, encoder, expectCode, manifestError, withSection } from './support.js';

const module = await wat2wasm('(module (memory (export "memory") 1))');

/** The image whose `.berm.abi` stream is exactly `stream`. */
function image(stream: string | Uint8Array): Uint8Array {
  return withSection(module, stream);
}

function badRecord(stream: string | Uint8Array, offset: number) {
  const error = manifestError(() => Manifest.fromImage(image(stream)));
  expectCode(error, 'bad-record');
  expect(error.offset).toBe(offset);
  expect(error.message).toContain(`byte ${offset}`);
  return error;
}

describe('the record stream', () => {
  it('takes values back to back with nothing between them', () => {
    const m = Manifest.fromImage(image('{"abi_version":1}{"event":{"name":"a","fields":true}}{"event":{"name":"b","fields":{}}}'));
    expect(m.events.map((e) => e.name)).toEqual(['a', 'b']);
  });

  it('finds the end of each value past brackets and quotes inside strings', () => {
    const usage = 'Braces } ] { [ and "quotes" and \\ backslashes \u00e9\u{1F600} stay in strings.';
    const stream = `${JSON.stringify({ abi_version: 1, usage })}\n${JSON.stringify({ event: { name: 'e', description: '}"{', fields: true } })}`;
    const m = Manifest.fromImage(image(stream));
    expect(m.data.usage).toBe(usage);
    expect(m.events[0]!.description).toBe('}"{');
  });

  it('bad-record: invalid JSON, at the offset of the record', () => {
    const error = badRecord('{"abi_version":1}\n\0\0{"event": {"name": "e",}}', 20);
    expect(error.message).toContain('not valid JSON');
    badRecord('{"abi_version":1} nonsense', 18);
    badRecord('{"abi_version":1}\n}', 18);
    badRecord('{"abi_version":1}x{"event":{"name":"e","fields":true}}', 17);
  });

  it('bad-record: a value that never closes', () => {
    const error = badRecord('{"abi_version":1}\n{"event":{"name":"e"', 18);
    expect(error.message).toContain('not closed');
    badRecord('{"abi_version":1,"usage":"no end}', 0);
  });

  it('bad-record: invalid UTF-8, at the offending byte', () => {
    const prefix = encoder.encode('{"abi_version":1}\n{"abi_version":1,"usage":"');
    for (const bad of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]]) {
      const stream = concat(encoder.encode('{"abi_version":1,"usage":"ok '), Uint8Array.of(...bad), encoder.encode('"}'));
      const error = badRecord(stream, 29);
      expect(error.message).toContain('UTF-8');
    }
    // A later record is located in the whole stream, not in its own bytes.
    badRecord(concat(prefix, Uint8Array.of(0xfe), encoder.encode('"}')), prefix.length);
  });

  it('bad-record: a value that is not an object', () => {
    for (const [stream, offset, what] of [
      ['{"abi_version":1}\n[1,2]', 18, 'array'],
      ['{"abi_version":1} 42', 18, 'number'],
      ['"text" {"abi_version":1}', 0, 'string'],
      ['{"abi_version":1}\0null', 18, 'null'],
      ['true', 0, 'boolean'],
    ] as const) {
      expect(badRecord(stream, offset).message).toContain(what);
    }
  });

  it('bad-record: an event record whose event is not an object, at the record', () => {
    for (const [stream, offset, what] of [
      ['{"abi_version":1}{"event":5}', 17, 'number'],
      ['{"abi_version":1}\n{"event":null}', 18, 'null'],
      ['{"abi_version":1}\0\0{"event":["e"]}', 19, 'array'],
      ['{"event":"e"} {"abi_version":1}', 0, 'string'],
    ] as const) {
      expect(badRecord(stream, offset).message).toContain(what);
    }
  });

  it('bad-record messages stay on one line when the record spans lines', () => {
    const error = badRecord('{"abi_version":1}\n{\n  "event": nothing\n}\n', 18);
    expect(error.message).toContain('not valid JSON');
    expect(error.message).not.toMatch(/[\r\n]/);
  });

  it('bad-record: a byte order mark is not a separator, and the message says what it is', () => {
    const bom = '\ufeff';
    expect(badRecord(`${bom}{"abi_version":1}`, 0).message).toContain('byte order mark');
    expect(badRecord(`{"abi_version":1}\n${bom}{"event":{"name":"e","fields":true}}`, 18).message).toContain('byte order mark');
  });

  it('bad-record: an object that is neither a program nor an event record', () => {
    const error = badRecord('{"abi_version":1}\n{"name":"x"}', 18);
    expect(error.message).toContain('neither');
    badRecord('{"abi_version":1}\n{"event":{"name":"e","fields":true},"extra":1}', 18);
  });

  it('bad-record: two program records, at the second', () => {
    const error = badRecord('{"abi_version":1}\n\n{"abi_version":1,"usage":"again"}', 19);
    expect(error.message).toContain('first is at byte 0');
  });

  it('bad-record: no program record (the section is there, its content is wrong)', () => {
    for (const stream of ['', '\0\0\0\n', '{"event":{"name":"e","fields":true}}']) {
      expect(badRecord(stream, 0).message).toContain('no program record');
    }
  });

  it('leaves a program `events` that is not an array for validation to point at', () => {
    const error = manifestError(() => Manifest.fromImage(image('{"abi_version":1,"events":{}}{"event":{"name":"e","fields":true}}')));
    expectCode(error, 'invalid-manifest');
    expect(error.path).toBe('/events');
  });
});
