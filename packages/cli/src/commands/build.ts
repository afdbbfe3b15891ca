import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type { ManifestData } from '@berm/manifest';
import { BaseCommand } from '../base-command.js';
import { printable } from '@berm/format/printable';
import { buildProject } from '../project-build.js';

export interface BuildCommandResult {
  image: string;
  manifest: ManifestData;
}

export default class Build extends BaseCommand {
  static summary = 'Compile an AssemblyScript harness into an image.';
  static description =
    "Compiles DIR/assembly/index.ts (DIR defaults to .) with AssemblyScript, json-as and the @berm/guest transform, which renders the manifest from the tools' types and doc comments and embeds it, and writes DIR/build/<name>.wasm (name: package.json's, without its scope, which must be a harness name: letters, digits, _ and -, at most 64). Prints the image's path and a summary; with --json, {image, manifest}. Compile errors are printed as the compiler gives them, with file, line and column, and exit 2. Needs no npm install: crab brings the compiler, json-as and the guest library; a project that installed assemblyscript builds with its own copies.";
  static examples = ['<%= config.bin %> build', '<%= config.bin %> build weather', '<%= config.bin %> build weather --optimize --json'];

  static args = {
    dir: Args.string({ description: 'the project directory', default: '.' }),
  };

  static flags = {
    optimize: Flags.boolean({ description: "run Binaryen's full optimisation (smaller, slower to build)", default: false }),
  };

  async run(): Promise<BuildCommandResult> {
    const { args, flags } = await this.parse(Build);
    const { image, result } = await buildProject(args.dir, { optimize: flags.optimize, quiet: this.jsonEnabled() });
    if (!this.jsonEnabled()) {
      const { tools, events } = result.manifest;
      const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
      const from = result.toolchain.source === 'project' ? ", the project's toolchain" : '';
      // The version is package.json's, the toolchain's versions those of the project's node_modules.
      this.log(printable(image));
      this.log(
        printable(
          `built ${result.name}${result.manifest.version ? ` ${result.manifest.version}` : ''}: ${count(tools.length, 'tool')} (${tools.map((t) => t.name).join(', ') || 'none'}), ${count(events.length, 'event')}, ${Math.round(result.bytes.length / 1024)} KiB (assemblyscript ${result.toolchain.assemblyscript.version}, json-as ${result.toolchain.jsonAs.version}${from})`,
        ),
      );
    }
    return { image, manifest: result.manifest };
  }
}
