import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../../base-command.js';
import { registryLogin } from '../../actions/registry-login.js';

export default class RegistryLogin extends BaseCommand {
  static summary = 'Store a credential for an OCI registry, as docker login does.';
  static description =
    "Checks USERNAME and the password (read from standard input with --password-stdin, so it stays out of shell history and the process list) against HOST, then stores them where docker keeps them: through the credential helper docker's config names for the host (credHelpers, credsStore), else base64 in the auths of $DOCKER_CONFIG/config.json (~/.docker/config.json). docker, skopeo and crab then share it. The credential is never printed. Exits 2 when the registry refuses it, 3 when it cannot be reached.";
  static examples = ['echo "$GITHUB_TOKEN" | <%= config.bin %> registry login ghcr.io -u octocat --password-stdin'];

  static args = {
    host: Args.string({ description: 'the registry host (ghcr.io, 127.0.0.1:5000)', required: true }),
  };

  static flags = {
    username: Flags.string({ char: 'u', description: 'the user name', required: true, helpValue: 'USER' }),
    'password-stdin': Flags.boolean({
      description: 'read the password from standard input (required: crab takes no password as an argument)',
      default: false,
    }),
    'insecure-registry': Flags.boolean({ description: 'speak plain HTTP to HOST (loopback hosts always are)', default: false }),
  };

  async run() {
    return this.act(await this.parse(RegistryLogin), registryLogin);
  }
}
