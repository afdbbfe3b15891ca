/**
 * The fish completion script, written here rather than taken from @oclif/plugin-autocomplete: that plugin
 * completes bash, zsh and PowerShell only, in every release to its latest (4.x), and its 3.3 and 4.x
 * need Node 22. The script is generated from the commands oclif loaded (oclif.manifest.json), so it
 * holds every visible command, topic and flag with its summary, for each of the CLI's names.
 */

/** What the script needs of a command, as oclif's loaded commands carry it. */
export interface FishCommand {
  id: string;
  hidden?: boolean;
  summary?: string;
  description?: string;
  args?: Record<string, { options?: readonly string[] }>;
  flags: Record<
    string,
    {
      name: string;
      char?: string;
      type: 'boolean' | 'option';
      hidden?: boolean;
      summary?: string;
      description?: string;
      options?: readonly string[];
      allowNo?: boolean;
    }
  >;
}

export interface FishTopic {
  name: string;
  description?: string;
  hidden?: boolean;
}

/** `text` inside fish's single quotes, where only `\` and `'` are special. */
function quoted(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** The first line of a summary or description: fish shows one line beside each completion. */
function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.trim();
}

function described(line: string, text: string | undefined): string {
  const shown = firstLine(text);
  return shown === '' ? line : `${line} -d ${quoted(shown)}`;
}

/** The completion script for `bins` (the first is the name the script was asked through). */
export function fishScript(bins: readonly string[], commands: readonly FishCommand[], topics: readonly FishTopic[]): string {
  const visible = commands.filter((c) => !c.hidden).sort((a, b) => a.id.localeCompare(b.id));
  const topicOf = new Map(topics.filter((t) => !t.hidden).map((t) => [t.name, t.description]));
  // What may follow each run of words already typed: `''` the command position, `registry` a topic's.
  const next = new Map<string, Map<string, string | undefined>>();
  for (const command of visible) {
    const words = command.id.split(':');
    for (let at = 0; at < words.length; at++) {
      const before = words.slice(0, at).join(' ');
      const word = words[at]!;
      const isCommand = at === words.length - 1;
      const about = isCommand ? (command.summary ?? command.description) : topicOf.get(words.slice(0, at + 1).join(':'));
      const offered = next.get(before) ?? new Map<string, string | undefined>();
      if (!offered.has(word) || isCommand) offered.set(word, about ?? offered.get(word));
      next.set(before, offered);
    }
  }

  const lines: string[] = [];
  for (const [before, offered] of next) {
    const at = before === '' ? '__berm_at' : `'__berm_at ${before}'`;
    // Where a command or topic name goes, files are not what is typed.
    lines.push(`complete -c $bin -n ${at} -f`);
    for (const [word, about] of offered) lines.push(described(`complete -c $bin -n ${at} -a ${quoted(word)}`, about));
  }
  for (const command of visible) {
    // A command that is also a topic (`autocomplete`, `autocomplete fish`) owns none of the longer one's words.
    const longer = visible.filter((other) => other.id.startsWith(`${command.id}:`));
    const condition = quoted(
      [command, ...longer].map((c, i) => `${i === 0 ? '' : 'and not '}__berm_command_is ${c.id.split(':').join(' ')}`).join('; '),
    );
    const choices = Object.values(command.args ?? {})[0]?.options;
    if (choices !== undefined) {
      const at = quoted(`__berm_at ${command.id.split(':').join(' ')}`);
      lines.push(`complete -c $bin -n ${at} -f -a ${quoted(choices.join(' '))}`);
    }
    for (const flag of Object.values(command.flags).sort((a, b) => a.name.localeCompare(b.name))) {
      if (flag.hidden) continue;
      let line = `complete -c $bin -n ${condition} -l ${flag.name}`;
      if (flag.char !== undefined) line += ` -s ${flag.char}`;
      if (flag.type === 'option') line += flag.options === undefined ? ' -r' : ` -x -a ${quoted(flag.options.join(' '))}`;
      lines.push(described(line, flag.summary ?? flag.description));
      if (flag.type === 'boolean' && flag.allowNo)
        lines.push(described(`complete -c $bin -n ${condition} -l no-${flag.name}`, flag.summary ?? flag.description));
    }
  }

  return `# fish completion for ${bins.join(' and ')}: \`${bins[0]} autocomplete fish\` says where it goes.
# Loaded once for every name, whichever fish loads first (each name's file holds the same script).
if not set -q __berm_completion_loaded
    set -g __berm_completion_loaded 1

    # The words typed after the program, flags left out.
    function __berm_words
        set -l words (commandline -opc)
        set -e words[1]
        for word in $words
            string match -q -- '-*' $word; or echo $word
        end
    end

    # Whether the words typed are exactly the arguments: nothing yet, or a topic.
    function __berm_at
        set -l words (__berm_words)
        test "$words" = "$argv"
    end

    # Whether the words typed start with the command named by the arguments.
    function __berm_command_is
        set -l words (__berm_words)
        set -l n (count $argv)
        test (count $words) -ge $n; or return 1
        test "$words[1..$n]" = "$argv"
    end

    for bin in ${bins.join(' ')}
${lines.map((l) => `        ${l}`).join('\n')}
    end
end
`;
}
