import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { daemonFlags } from '../daemon-flags.js';
import { registryFlags } from '../registry/flags.js';
import { limitFlags } from '../setting-flags.js';
import { deploy } from '../actions/deploy.js';

export default class Deploy extends BaseCommand {
  static summary = 'Deploy an image as a named harness.';
  static description =
    'Sends IMAGE (a wasm module with a .berm.abi section) to bermd, which checks it against the guest ABI, compiles it and stores it as NAME, replacing what was there. A replacement that breaks a tool or event callers used lately (30 days by default) is refused and its breaks are listed; --force deploys it anyway. Prints the breaks the daemon reported and its notices (a declared program that is not deployed is said, and the deploy carries on). --dry-run asks the same of the daemon (every check and the gate) and prints what a deploy would do, or how it would be refused, with nothing stored or served. IMAGE may be a registry reference: crab resolves it to its manifest digest, pulls the image by that digest, checks both digests, and the deploy records the reference and digest it came from (`berm ls`, `berm history`); --require-digest refuses a reference without @sha256:…. A deploy ends with the history entry it made (who, through which bermd, when; `berm history NAME` lists them). Exits 1 when the daemon refuses the image, 2 on bad input, 3 when the daemon cannot be reached.';
  static examples = [
    '<%= config.bin %> deploy echo examples/echo.wasm',
    '<%= config.bin %> deploy --dry-run weather build/weather.wasm',
    'BERM_URL=http://127.0.0.1:9000 <%= config.bin %> deploy --json echo build/echo.wasm',
    '<%= config.bin %> deploy weather build/weather.wasm --call-timeout 5s --max-memory 16M --grant berm.http.fetch=api.example.com --grant secret=example',
    '<%= config.bin %> deploy crawler build/crawler.wasm --max-concurrency 1',
    '<%= config.bin %> deploy weather oci://ghcr.io/org/weather@sha256:… --require-digest',
  ];

  static args = {
    name: Args.string({ description: 'the harness name: 1 to 64 letters, digits, _ or - (no dots)', required: true }),
    image: Args.string({
      description: 'the wasm image to deploy: a file, or a registry reference (oci://HOST/REPO:TAG or @sha256:…)',
      required: true,
    }),
  };

  static flags = {
    ...daemonFlags,
    force: Flags.boolean({ description: 'deploy even when the new image breaks recent callers', default: false }),
    'dry-run': Flags.boolean({
      description:
        'run every check and the compatibility gate and say what a deploy would do, or how it would be refused; nothing is stored or served',
      default: false,
    }),
    ...limitFlags,
    grant: Flags.string({
      description:
        'grant only what is listed (repeatable): syscall=NAME (with every host it declares), NAME=HOST[,HOST] (those hosts), secret=NAME[,NAME], or none; without --grant, everything the image declares is granted',
      helpValue: 'GRANT',
      multiple: true,
    }),
    ...registryFlags,
    'require-digest': Flags.boolean({
      description:
        'refuse a registry reference without a digest (@sha256:…): deploy only what was reviewed, never what a tag points to now',
      default: false,
    }),
  };

  async run() {
    return this.act(await this.parse(Deploy), deploy);
  }
}
