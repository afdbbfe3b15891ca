import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { build } from '../actions/build.js';

export default class Build extends BaseCommand {
  static summary = 'Compile an AssemblyScript harness into an image.';
  static description =
    "Compiles DIR/assembly/index.ts (DIR defaults to .) with AssemblyScript, json-as and the @berm/guest transform, which renders the manifest from the tools' types and doc comments and embeds it, and writes DIR/build/<name>.wasm (name: package.json's, without its scope, which must be a harness name: letters, digits, _ and -, at most 64). Prints the image's path and a summary; with --json, {image, manifest}. Compile errors are printed as the compiler gives them, with file, line and column, and exit 2. Needs no npm install: crab brings the compiler, json-as and the guest library; a project that installed assemblyscript builds with its own copies.";
  static examples = ['<%= config.bin %> build', '<%= config.bin %> build weather', '<%= config.bin %> build weather --optimize --json'];

  static args = {
    dir: Args.string({ description: 'the project directory', default: '.', ignoreStdin: true }),
  };

  static flags = {
    optimize: Flags.boolean({ description: "run Binaryen's full optimisation (smaller, slower to build)", default: false }),
  };

  async run() {
    return this.act(await this.parse(Build), build);
  }
}
