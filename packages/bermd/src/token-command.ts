/**
 * `bermd token new NAME --scope SCOPE... [--access FILE] [--replace]`: makes a static principal. The token
 * is printed once, on stdout, and is kept nowhere: the access file gets its SHA-256. Without `--access`,
 * the entry to add is printed on stderr. A running bermd reads the file again on SIGHUP.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isBermScope } from '@berm/protocol';
import { AccessFileError, newToken, PRINCIPAL_NAME, readAccessFile, tokenSha256, writeAccessFile, type AccessEntry } from './auth/index.js';

export const TOKEN_USAGE = `usage: bermd token new NAME --scope SCOPE... [--access FILE] [--replace]

  Prints a fresh token for the principal NAME, once, and adds its entry to the access file.
  --scope    a scope it holds (repeatable, or comma-separated): berm:read, berm:deploy, berm:force,
             berm:call (every harness) or berm:call:NAME (one harness)
  --access   the access file to add it to (bermd --access FILE); created when missing. Without it the
             entry is printed on stderr, to add by hand
  --replace  give NAME a new token and these scopes when the file already holds it (a rotation)`;

function fail(message: string): void {
  process.stderr.write(`bermd token: ${message}\n${TOKEN_USAGE.split('\n\n')[0]}\n`);
  process.exitCode = 2;
}

export async function tokenCommand(argv: string[]): Promise<void> {
  let values: { scope?: string[]; access?: string; replace?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        scope: { type: 'string', multiple: true },
        access: { type: 'string' },
        replace: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
    if (values.help) {
      process.stdout.write(`${TOKEN_USAGE}\n`);
      return;
    }
  } catch (e) {
    return fail((e as Error).message);
  }
  if (positionals[0] !== 'new' || positionals.length !== 2) return fail('expected: bermd token new NAME --scope SCOPE');
  const name = positionals[1]!;
  if (!PRINCIPAL_NAME.test(name))
    return fail(`${JSON.stringify(name)}: a name is 1 to 128 letters, digits or . _ @ : + - (starting with a letter or digit)`);
  const scopes = [
    ...new Set(
      (values.scope ?? [])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
  if (scopes.length === 0)
    return fail(`${name}: give at least one --scope (berm:read, berm:deploy, berm:force, berm:call, berm:call:NAME)`);
  const strange = scopes.find((s) => !isBermScope(s));
  if (strange !== undefined)
    return fail(`--scope ${strange}: unknown scope; use berm:read, berm:deploy, berm:force, berm:call or berm:call:NAME`);

  const token = newToken();
  const entry: AccessEntry = { name, token_sha256: tokenSha256(token), scopes };
  const file = values.access;
  if (file === undefined) {
    process.stdout.write(`${token}\n`);
    process.stderr.write(`bermd token: add this entry to the --access file (the token above is shown once):\n${JSON.stringify(entry)}\n`);
    return;
  }
  try {
    const entries = existsSync(file) ? await readAccessFile(file) : [];
    const at = entries.findIndex((e) => e.name === name);
    if (at >= 0 && !values.replace)
      return fail(`${file} already holds a principal named ${name}: give --replace to give it a new token, or choose another name`);
    if (at >= 0) entries[at] = entry;
    else entries.push(entry);
    await writeAccessFile(file, entries);
  } catch (e) {
    if (!(e instanceof AccessFileError) && !(e as NodeJS.ErrnoException).code) throw e;
    process.stderr.write(`bermd token: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`${token}\n`);
  process.stderr.write(`bermd token: ${name} holds ${scopes.join(' ')} in ${file}; send SIGHUP to a running bermd to read it again\n`);
}
