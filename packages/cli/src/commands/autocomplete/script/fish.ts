import { Command } from '@oclif/core/command';
import { type FishCommand, fishScript } from '../../../fish-completion.js';

export default class AutocompleteScriptFish extends Command {
  static summary = 'Print the fish completion script.';
  static hidden = true;

  async run(): Promise<void> {
    const names = [this.config.bin, ...(this.config.binAliases ?? [])];
    process.stdout.write(fishScript(names, this.config.commands as FishCommand[], this.config.topics));
  }
}
