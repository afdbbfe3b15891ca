/**
 * The testing helper for harness authors (`@berm/guest/testing` gives it too): an image loaded into
 * bermd's runtime as a deploy would admit it, and its tools called as `/mcp` would call them, with bermd's
 * limits, validators and host calls, in a test of the author's own, with no daemon.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHarnessName, type Limits, type ToolContent, type ToolEvent, type ToolLog } from '@berm/protocol';
import { Secrets } from '../egress/index.js';
import { EmbeddedRuntime, type EmbeddedImage } from './runtime.js';

/** An image: its path (a string or a file URL) or its bytes. */
export type ImageSource = string | URL | Uint8Array;

export interface LoadOptions {
  /** The harness name it is loaded as (what its events and refusals name); the file's name less `.wasm` by default, `harness` for bytes. */
  name?: string;
  /** Programs its `berm.call` may reach, by the names it declares them with. */
  programs?: Record<string, ImageSource>;
  /** Its limits, by their wire names (`timeout` in ms, `max_memory` in bytes, ...); bermd's defaults for those unset. */
  limits?: Partial<Limits>;
  /** Syscalls to serve (`berm.http.fetch`); none by default, and the guest's requests are refused. */
  serve?: string[];
  /** The secrets a served syscall may use: a path to a file in bermd's secrets format, or its JSON text's value. */
  secrets?: string | Record<string, unknown>;
}

/** One call's answer, in a test's terms. */
export interface CallAnswer {
  /** The structured result (MCP's `structuredContent`), or null when the tool lists none. */
  result: unknown;
  content: ToolContent[];
  isError: boolean;
  events: ToolEvent[];
  logs: ToolLog[];
}

export interface LoadedHarness {
  /** Calls `tool`; a call the host refuses or stops (unknown tool, bad arguments, a limit) rejects with a `CallRefused` (`code`, `message`). */
  call(tool: string, args?: unknown): Promise<CallAnswer>;
  /** Stops its workers: call it when the test is done, or the process waits for them. */
  close(): Promise<void>;
}

async function bytesOf(source: ImageSource): Promise<Uint8Array> {
  return source instanceof Uint8Array ? source : new Uint8Array(await readFile(source));
}

function nameOf(source: ImageSource): string {
  if (source instanceof Uint8Array) return 'harness';
  const file = basename(source instanceof URL ? fileURLToPath(source) : source).replace(/\.wasm$/, '');
  if (!isHarnessName(file))
    throw new TypeError(`${file} is not a harness name (1 to 64 letters, digits, _ or -): give load() a name option`);
  return file;
}

/** Loads `image` as a deploy would admit it (rejects with the `BermdError` a deploy would refuse it with). */
export async function load(image: ImageSource, options: LoadOptions = {}): Promise<LoadedHarness> {
  const name = options.name ?? nameOf(image);
  const images: EmbeddedImage[] = [{ name, bytes: await bytesOf(image) }];
  for (const [program, source] of Object.entries(options.programs ?? {})) images.push({ name: program, bytes: await bytesOf(source) });
  const { secrets } = options;
  const runtime = await EmbeddedRuntime.open(images, {
    limits: options.limits,
    serve: options.serve,
    secrets:
      secrets === undefined
        ? undefined
        : typeof secrets === 'string'
          ? await Secrets.load(secrets)
          : Secrets.parse(JSON.stringify(secrets), 'the secrets given to load()'),
  });
  return {
    async call(tool, args = {}) {
      const { result, content, is_error, events, logs } = await runtime.call(name, tool, args);
      return { result, content, isError: is_error, events, logs };
    },
    close: () => runtime.close(),
  };
}
