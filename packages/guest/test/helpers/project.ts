// Harness projects for the guest tests: written from readable sources into a temporary directory and
// built with the real compiler, json-as and transform; and a small host that runs a built image the
// way the ABI (docs/contract.md §4) says, on one instance, so tests can call its tools repeatedly.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ProjectFiles {
  [path: string]: string | object;
}

/** Writes `files` (objects as JSON) into a new temporary directory and returns it. */
export async function writeProject(files: ProjectFiles): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berm-guest-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  return dir;
}

/** Links `packages` (name to directory) into `dir/node_modules`, as an install would place them. */
export async function linkModules(dir: string, packages: Record<string, string>): Promise<void> {
  for (const [name, target] of Object.entries(packages)) {
    const at = join(dir, 'node_modules', name);
    await mkdir(dirname(at), { recursive: true });
    await symlink(target, at, 'dir');
  }
}

export async function removeProject(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export interface HostRequest {
  call: string;
  request: unknown;
}

/** A host for one instance: every host call is recorded and answered with `answer` (by default {"ok": null}). */
export class TestHost {
  readonly requests: HostRequest[] = [];
  answer: (call: string, request: unknown) => unknown = () => ({ ok: null });
  private exports!: WebAssembly.Exports & { memory: WebAssembly.Memory; berm_alloc: (len: number) => number };
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  static async instantiate(bytes: Uint8Array): Promise<TestHost> {
    const host = new TestHost();
    const module = await WebAssembly.compile(bytes);
    const imports: Record<string, Record<string, (ptr: number, len: number) => bigint>> = {};
    for (const imp of WebAssembly.Module.imports(module)) {
      const name = `${imp.module}.${imp.name}`;
      (imports[imp.module] ??= {})[imp.name] = (ptr, len) => {
        const request = JSON.parse(host.read(ptr, len)) as unknown;
        host.requests.push({ call: name, request });
        return host.write(JSON.stringify(host.answer(name, request)));
      };
    }
    const instance = await WebAssembly.instantiate(module, imports);
    host.exports = instance.exports as TestHost['exports'];
    return host;
  }

  get memory(): WebAssembly.Memory {
    return this.exports.memory;
  }

  private read(ptr: number, len: number): string {
    return this.decoder.decode(new Uint8Array(this.exports.memory.buffer, ptr >>> 0, len >>> 0));
  }

  private write(text: string): bigint {
    const bytes = this.encoder.encode(text);
    const ptr = this.exports.berm_alloc(bytes.length) >>> 0;
    new Uint8Array(this.exports.memory.buffer, ptr, bytes.length).set(bytes);
    return (BigInt(ptr) << 32n) | BigInt(bytes.length);
  }

  /** Calls tool `tool` with `args` (JSON text or a value) and returns the envelope it answers, parsed. */
  call(tool: string, args: unknown = {}): { ok?: unknown; error?: string } {
    return this.callExport(`berm_tool_${tool}`, args);
  }

  /** Calls the export `name` (a tool's, a prompt's, berm_resource_read, berm_complete) with `request`, as bermd does; the envelope, parsed. */
  callExport(name: string, request: unknown): { ok?: unknown; error?: string } {
    const entry = this.exports[name] as (ptr: number, len: number) => bigint;
    const text = typeof request === 'string' ? request : JSON.stringify(request);
    const packed = this.write(text);
    const result = entry(Number(packed >> 32n), Number(packed & 0xffffffffn));
    return JSON.parse(this.read(Number(result >> 32n), Number(result & 0xffffffffn))) as { ok?: unknown; error?: string };
  }
}
