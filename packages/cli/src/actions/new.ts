import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { bundledToolchain } from '@berm/guest/build';
import { printable } from '@berm/format/printable';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { PROJECT_NAME, scaffold } from '../scaffold.js';

export interface NewResult {
  name: string;
  dir: string;
  files: string[];
}

export async function newProject({ args, flags }: Parsed<{ name: string }, { dir?: string }>, ctx: CommandContext): Promise<NewResult> {
  if (!PROJECT_NAME.test(args.name)) {
    throw new CliError(
      'bad-name',
      `'${args.name}' is not a project name: lowercase letters, digits, _ and -, starting with a letter or digit, at most 64`,
      { name: args.name },
    );
  }
  const dir = flags.dir ?? args.name;
  await ensureEmpty(dir);
  // The versions crab builds with, so a project that installs them gets the same ones.
  const toolchain = bundledToolchain();
  const files = scaffold(args.name, {
    assemblyscript: toolchain.assemblyscript.version,
    jsonAs: toolchain.jsonAs.version,
    guest: toolchain.guest.version,
  });
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content, { flag: 'wx' });
  }
  const result = { name: args.name, dir, files: files.map((f) => f.path) };
  if (!ctx.json) {
    // DIR is as typed, and a terminal would act on an escape sequence in it as readily as in an image's text.
    ctx.log(printable(`wrote ${dir}/: ${result.files.join(', ')}`));
    ctx.log(printable(`next: ${ctx.bin} build ${dir} && ${ctx.bin} deploy ${args.name} ${join(dir, 'build', `${args.name}.wasm`)}`));
  }
  return result;
}

/** Refuses `dir` when it holds anything; creates it when it does not exist. */
async function ensureEmpty(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new CliError('dir-not-empty', `${dir} exists and is not a directory`, { dir });
    throw new CliError('file-unreadable', `cannot read ${dir}: ${(e as Error).message}`, { dir });
  }
  if (entries.length > 0) {
    throw new CliError(
      'dir-not-empty',
      `${dir} is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}); crab new writes only into a new or empty directory`,
      { dir },
    );
  }
}
