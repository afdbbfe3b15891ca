// bermd's error table (src/error-table.ts): one real instance of each of bermd's own error classes is
// looked up by the table, which must know its name, give the code its row says (a RunnerError's by its
// own code), and turn it into the answer that code has. Every class in src that extends Error is in the
// table, so a new one cannot be answered by a conversion written by hand elsewhere.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS, OptionsError, SecretsFileError } from 'bermd';
import { describe, expect, it } from 'vitest';
import { AccessFileError } from '../dist/auth/index.js';
import { SchemaError } from '../dist/deploy/postgres-schema.js';
import { SignatureReadError } from '../dist/deploy/wasm-signatures.js';
import { ResolveError } from '../dist/egress/index.js';
import { ERROR_TABLE, type ErrorRoute, INTERNAL_MESSAGE, isBadOption, wireCodeOf, wireErrorOf } from '../dist/error-table.js';
import { CallRefused } from '../dist/embedded/index.js';
import { BermdError } from '../dist/errors.js';
import { FAULT_STEPS, InjectedFault } from '../dist/faults.js';
import { SessionCapError } from '../dist/mcp/index.js';
import { AbiViolation } from '../dist/runtime/guest-memory.js';
import { TraceConfigError } from '../dist/telemetry/index.js';
import { RunnerError, type RunnerErrorCode } from '../dist/runtime/index.js';
import { TaskStopped } from '../dist/runtime/pool.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Instances of every class the table names (a RunnerError once for each of its codes). */
const MADE: Record<keyof typeof ERROR_TABLE, Error[]> = {
  OptionsError: [new OptionsError('--listen x: expected HOST:PORT')],
  ResolveError: [new ResolveError('--resolve x: expected HOST:PORT:ADDRESS')],
  SecretsFileError: [new SecretsFileError('secrets.json is readable by others')],
  AccessFileError: [new AccessFileError('--access access.json: entry 0: unknown member "token"')],
  TraceConfigError: [new TraceConfigError('OTEL_EXPORTER_OTLP_PROTOCOL=grpc: expected http/protobuf or http/json')],
  SchemaError: [new SchemaError('the database is at schema 9')],
  AbiViolation: [new AbiViolation('berm_alloc did not return an i32')],
  TaskStopped: [new TaskStopped('the task was stopped')],
  CallRefused: [new CallRefused('timeout', 'the call ran past its time limit')],
  SessionCapError: [new SessionCapError(3)],
  SignatureReadError: [new SignatureReadError('unknown export kind', 12)],
  RunnerError: (['memory-too-large', 'bad-module', 'bad-schema', 'bad-harness', 'bad-option', 'closed'] satisfies RunnerErrorCode[]).map(
    (code) => new RunnerError(code, `a runner error ${code}`, 'where'),
  ),
  InjectedFault: [new InjectedFault(FAULT_STEPS[0]!)],
};

/** The code a row gives `e`: its own, its RunnerError code's, or internal for one that is never meant to reach the wire. */
function codeOfRow(route: ErrorRoute, e: Error): string {
  if ('wire' in route) return route.wire;
  if ('wireByCode' in route) return route.wireByCode[(e as RunnerError).code]!;
  return 'internal';
}

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sources(full)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

describe("bermd's error table", () => {
  for (const [name, route] of Object.entries(ERROR_TABLE) as Array<[keyof typeof ERROR_TABLE, ErrorRoute]>) {
    it(`answers a ${name} as its row says`, () => {
      for (const e of MADE[name]) {
        expect(e.name).toBe(name);
        const code = codeOfRow(route, e);
        expect(wireCodeOf(e)).toBe(code);
        const answered = wireErrorOf(e);
        expect(answered).toBeInstanceOf(BermdError);
        expect(answered.code).toBe(code);
        expect(answered.status).toBe(ERROR_STATUS[answered.code]);
        // An internal failure's words are for the log only; a client's error says what it was.
        if (code === 'internal') {
          expect(answered.message).toBe(INTERNAL_MESSAGE);
          expect(answered.cause).toBe(e);
        } else {
          expect(answered.message).toBe(e.message);
        }
        expect(isBadOption(e)).toBe('offWire' in route && route.offWire === 'bad-option');
      }
    });
  }

  it('gives a RunnerError of every code a row', () => {
    const route = ERROR_TABLE.RunnerError;
    expect(Object.keys(route.wireByCode).sort()).toEqual(MADE.RunnerError.map((e) => (e as RunnerError).code).sort());
  });

  it('keeps the words and details its caller gives, and leaves a wire error as it is', () => {
    const capped = wireErrorOf(new SessionCapError(2), 'at the cap', { cap: 2 });
    expect(capped.toBody()).toEqual({ error: { code: 'session-cap', message: 'at the cap', cap: 2 } });
    const wire = new BermdError('bad-name', 'no');
    expect(wireErrorOf(wire)).toBe(wire);
    expect(wireCodeOf(wire)).toBe('bad-name');
  });

  it('answers anything else as internal, its words kept for the log', () => {
    const e = new TypeError('cannot read properties of undefined');
    expect(wireCodeOf(e)).toBe('internal');
    expect(wireErrorOf(e, 'ignored')).toMatchObject({ code: 'internal', message: INTERNAL_MESSAGE, cause: e });
    expect(wireCodeOf('a string')).toBe('internal');
  });

  it('holds every class of src that extends Error', async () => {
    const declared = new Set<string>();
    for (const file of await sources(SRC)) {
      for (const m of (await readFile(file, 'utf8')).matchAll(/\bclass (\w+) extends Error\b/g)) declared.add(m[1]!);
    }
    expect([...declared].sort()).toEqual(Object.keys(ERROR_TABLE).sort());
  });
});
