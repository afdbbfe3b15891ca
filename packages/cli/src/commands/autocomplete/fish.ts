import { Command } from '@oclif/core/command';

export default class AutocompleteFish extends Command {
  static summary = 'Display fish autocomplete installation instructions.';
  static description =
    'Says where the fish completion goes: the script `autocomplete script fish` prints, saved under both names in the completions directory fish reads. bash, zsh and PowerShell are `autocomplete SHELL`.';
  static examples = ['<%= config.bin %> autocomplete fish'];

  async run(): Promise<void> {
    const bin = this.config.bin;
    const names = [bin, ...(this.config.binAliases ?? [])];
    const dir = '$__fish_config_dir/completions';
    const saves = names.map((name) => `  ${bin} autocomplete script fish > ${dir}/${name}.fish`).join('\n');
    this.log(`
Setup Instructions for ${bin.toUpperCase()} CLI Autocomplete in fish ---
==============================================

1) Run these commands in fish:

  mkdir -p ${dir}
${saves}

  fish loads a command's completion from that directory the first time it completes it.

2) Start using autocomplete:

  ${bin} <TAB>                  # Command completion
  ${bin} command --<TAB>        # Flag completion

  Run step 1 again after an upgrade, so that new commands and flags complete.
`);
  }
}
