import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { bundledToolchain } from '@berm/guest/build';
import { BaseCommand } from '../base-command.js';
import { CliError } from '../failure.js';
import { printable } from '@berm/format/printable';
import { PROJECT_NAME, scaffold } from '../scaffold.js';

export interface NewResult {
  name: string;
  dir: string;
  files: string[];
}

export default class New extends BaseCommand {
  static summary = 'Write a new harness project in AssemblyScript.';
  static description =
    'Writes DIR (default ./NAME): package.json, assembly/index.ts with one tool and one event, a test that runs the built image with Node, and a README that says how to build, deploy and call it. It builds as it is with `crab build DIR`. Refuses a directory that exists and is not empty.';
  static examples = ['<%= config.bin %> new weather', '<%= config.bin %> new weather --dir harnesses/weather'];

  static args = {
    name: Args.string({
      description: 'the harness name: lowercase letters, digits, _ and -, at most 64 (a harness and an npm package name)',
      required: true,
    }),
  };

  static flags = {
    dir: Flags.string({ description: 'where to write the project [default: ./NAME]', helpValue: 'DIR' }),
  };

  async run(): Promise<NewResult> {
    const { args, flags } = await this.parse(New);
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
    if (!this.jsonEnabled()) {
      // DIR is as typed, and a terminal would act on an escape sequence in it as readily as in an image's text.
      this.log(printable(`wrote ${dir}/: ${result.files.join(', ')}`));
      this.log(
        printable(
          `next: ${this.config.bin} build ${dir} && ${this.config.bin} deploy ${args.name} ${join(dir, 'build', `${args.name}.wasm`)}`,
        ),
      );
    }
    return result;
  }
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
