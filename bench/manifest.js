// Reading a manifest: cost against image size, and against a general wasm decoder measured in the same run.
//
//   npx tsc -b && node bench/manifest.js [--mb 20] [--runs 201]
//
// Generates ~20 MB and ~2 MB core modules (many functions with bulk-memory code, plus a data
// segment, plus a .berm.abi section), writes them to a temp directory, then prints the medians of
// Manifest.fromImage(bytes), readManifestFile(path) and @webassemblyjs/wasm-parser's decode with the
// code and data sections ignored.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Manifest, readManifestFile, writeManifestSection } from '@berm/manifest';

// The decoder is a dev dependency of the manifest package, resolved from there.
const requireFromManifest = createRequire(new URL('../packages/manifest/package.json', import.meta.url));
const { decode } = requireFromManifest('@webassemblyjs/wasm-parser');

const { values } = parseArgs({ options: { mb: { type: 'string', default: '20' }, runs: { type: 'string', default: '201' } } });
const bigMb = Number(values.mb);
const runs = Number(values.runs);

function leb(value) {
  const out = [];
  do {
    out.push((value & 0x7f) | (value >= 0x80 ? 0x80 : 0));
    value = Math.floor(value / 0x80);
  } while (value > 0);
  return out;
}

function section(id, body) {
  return [Uint8Array.of(id, ...leb(body.length)), body];
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A core module of about `mb` megabytes: 80% code (functions of ~1 KB that fill, copy and use
 * saturating truncation, all post-MVP instructions V8 accepts), 20% data segment.
 */
function generateModule(mb) {
  const total = mb * 1024 * 1024;
  const dataBytes = Math.floor(total * 0.2);
  // One body: memory.fill and memory.copy (0xfc 0x0b / 0x0a), i64.trunc_sat_f64_s (0xfc 0x06), then
  // (i32.const n) drop pairs to ~1 KB.
  const prologue = [
    0x41,
    0x00,
    0x41,
    0x00,
    0x41,
    0x10,
    0xfc,
    0x0b,
    0x00, // memory.fill
    0x41,
    0x20,
    0x41,
    0x00,
    0x41,
    0x10,
    0xfc,
    0x0a,
    0x00,
    0x00, // memory.copy
    0x44,
    0,
    0,
    0,
    0,
    0,
    0,
    0xf0,
    0x3f,
    0xfc,
    0x06,
    0x1a, // (f64.const 1) i64.trunc_sat_f64_s drop
  ];
  const filler = [];
  while (prologue.length + filler.length < 1000) filler.push(0x41, filler.length & 0x3f, 0x1a);
  const code = Uint8Array.from([0x00, ...prologue, ...filler, 0x0b]);
  const body = Uint8Array.from([...leb(code.length), ...code]);
  const functions = Math.floor((total - dataBytes) / body.length);

  const codeSection = new Uint8Array(leb(functions).length + functions * body.length);
  codeSection.set(leb(functions), 0);
  for (let i = 0, at = leb(functions).length; i < functions; i++, at += body.length) codeSection.set(body, at);

  const data = new Uint8Array(dataBytes);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
  const dataSection = concat([Uint8Array.of(1, 0x00, 0x41, 0x00, 0x0b, ...leb(dataBytes)), data]);
  const pages = Math.ceil(dataBytes / 65536) + 1;

  return concat([
    Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00),
    ...section(1, Uint8Array.of(1, 0x60, 0, 0)), // type: () -> ()
    ...section(3, concat([Uint8Array.from(leb(functions)), new Uint8Array(functions)])), // every function of type 0
    ...section(5, Uint8Array.of(1, 0x00, ...leb(pages))), // memory
    ...section(7, Uint8Array.of(1, 6, ...new TextEncoder().encode('memory'), 0x02, 0)), // export "memory"
    ...section(12, Uint8Array.of(1)), // data count, which memory.fill's validation rules need
    ...section(10, codeSection),
    ...section(11, dataSection),
  ]);
}

const manifest = {
  abi_version: 1,
  version: '1.0.0',
  description: 'A generated program for the manifest benchmark',
  homepage: '',
  repository: '',
  readme: '',
  usage: 'Call fill.',
  tools: [{ name: 'fill', description: 'Fills.', arguments: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } } }],
  events: [{ name: 'filled', description: 'Filled.', fields: { type: 'object', properties: { n: { type: 'integer' } } } }],
  deps: { programs: [], syscalls: {}, secrets: [] },
};

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function time(n, fn) {
  await fn(); // warm-up, and the validator's one-time compile
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(samples);
}

/** Bytes read through FileHandle.read while `fn` runs. */
async function bytesRead(path, fn) {
  const probe = await open(path, 'r');
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const read = proto.read;
  let total = 0;
  proto.read = async function (...args) {
    const answer = await read.apply(this, args);
    total += answer.bytesRead;
    return answer;
  };
  try {
    await fn();
  } finally {
    proto.read = read;
  }
  return total;
}

const ms = (v) => `${v < 1 ? v.toFixed(3) : v.toFixed(1)} ms`;
const dir = await mkdtemp(join(tmpdir(), 'berm-bench-'));
try {
  const results = [];
  for (const mb of [bigMb / 10, bigMb]) {
    const image = writeManifestSection(generateModule(mb), manifest);
    if (!WebAssembly.validate(image)) throw new Error('the generated module does not validate');
    const path = join(dir, `image-${mb}mb.wasm`);
    await writeFile(path, image);
    const buffer = image.buffer.slice(image.byteOffset, image.byteOffset + image.byteLength);

    const check = Manifest.fromImage(image).data;
    if (JSON.stringify(check) !== JSON.stringify(manifest)) throw new Error('read back a different manifest');

    const fromImage = await time(runs, () => Manifest.fromImage(image));
    const fromFile = await time(runs, () => readManifestFile(path));
    const wasmParser = await time(7, () => decode(buffer, { ignoreCodeSection: true, ignoreDataSection: true }));
    const read = await bytesRead(path, () => readManifestFile(path));
    results.push({ mb, size: image.length, fromImage, fromFile, wasmParser, read });
  }

  let fullDecode = 'decoded';
  try {
    decode(writeManifestSection(generateModule(0.05), manifest).buffer);
  } catch (e) {
    fullDecode = `fails: ${String(e.message ?? e).split('\n')[0]}`;
  }

  console.log(`node ${process.version}, ${runs} runs per reader (7 for the decoder), medians\n`);
  console.log('image      Manifest.fromImage  readManifestFile  bytes read  wasm-parser decode*  decode / fromImage  decode / file');
  for (const r of results) {
    console.log(
      [
        `${(r.size / 1048576).toFixed(1)} MB`.padEnd(10),
        ms(r.fromImage).padStart(18),
        ms(r.fromFile).padStart(17),
        String(r.read).padStart(11),
        ms(r.wasmParser).padStart(20),
        `${Math.round(r.wasmParser / r.fromImage)}x`.padStart(19),
        `${Math.round(r.wasmParser / r.fromFile)}x`.padStart(14),
      ].join('  '),
    );
  }
  const [small, big] = results;
  console.log(`\n* decode(bytes, { ignoreCodeSection: true, ignoreDataSection: true })`);
  console.log(`  decoding the code too ${fullDecode}`);
  console.log(
    `\n${(big.size / small.size).toFixed(1)}x the bytes: fromImage ${(big.fromImage / small.fromImage).toFixed(2)}x the time, ` +
      `readManifestFile ${(big.fromFile / small.fromFile).toFixed(2)}x, decode ${(big.wasmParser / small.wasmParser).toFixed(1)}x`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
