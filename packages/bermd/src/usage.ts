/** bermd's synopsis and `--help`, written from the settings' rows with the defaults the parser uses. */
import { printDefault, SETTINGS, type Setting } from '@berm/protocol';
import { SERVABLE_SYSCALLS } from './egress/index.js';
import { settingDefault } from './limits.js';

/** What help says of a row's value that only bermd knows: what it may hold, or how its default is reckoned. */
const FACTS: Readonly<Record<string, string>> = {
  serve: `from ${SERVABLE_SYSCALLS.join(', ')}`,
  workers: 'default: --max-concurrency plus half the cores, at least 1 more',
};

const PLACEHOLDER: Record<Setting['kind'], string> = {
  duration: 'DURATION',
  size: 'N[K|M|G]',
  count: 'N',
  whole: 'N',
  boolean: 'true|false',
  switch: '',
  string: 'VALUE',
  list: 'VALUE',
};

function synopsisOf(row: Setting): string {
  const value = row.value ?? PLACEHOLDER[row.kind];
  const flag = value === '' ? `[--${row.flag}]` : `[--${row.flag} ${value}]`;
  return row.kind === 'list' ? `${flag}...` : flag;
}

/** `(default 10s)`, `(default 8, the cores)`, or nothing for a row without one. */
function defaultOf(row: Setting): string {
  const fact = FACTS[row.flag];
  if (typeof row.default === 'object') {
    if (row.default.machine === 'cores') return ` (default ${settingDefault(row)}, the cores)`;
    return fact === undefined ? '' : ` (${fact})`;
  }
  const printed = printDefault(row);
  if (row.kind === 'switch' || printed === undefined) return fact === undefined ? '' : ` (${fact})`;
  return ` (${fact === undefined ? '' : `${fact}; `}default ${printed})`;
}

const INDENT = '             ';
const WIDTH = 140;

function synopsis(): string {
  const lines: string[] = [];
  let line = 'usage: bermd';
  for (const part of SETTINGS.map(synopsisOf)) {
    if (line.length + 1 + part.length > WIDTH) {
      lines.push(line);
      line = INDENT;
    }
    line += ` ${part}`;
  }
  lines.push(line);
  lines.push('       bermd migrate-store --from DIR --to postgres://USER@HOST:PORT/DB   (moves a directory store in; --help says more)');
  return lines.join('\n');
}

const COLUMN = 20;

function helpLine(row: Setting): string {
  const [first, ...more] = row.help.split('\n');
  const flag = `  --${row.flag}`;
  const head = flag.length < COLUMN ? flag.padEnd(COLUMN) : `${flag} `;
  return [`${head}${first}${defaultOf(row)}`, ...more.map((line) => `${' '.repeat(COLUMN)}${line}`)].join('\n');
}

/** The synopsis, a blank line, then a line for each flag. */
export const USAGE = `${synopsis()}\n\n${SETTINGS.map(helpLine).join('\n')}`;
