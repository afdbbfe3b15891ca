import { constants as osConstants } from 'node:os';
import type { Logger } from 'pino';
import { isLoopbackAddress } from './app/index.js';
import { createDaemon, type Daemon } from './daemon.js';
import { reasonOf, storeLocation, storePasswords } from './deploy/index.js';
import { isBermdError } from './errors.js';
import { armFault, FAULT_ENV } from './faults.js';
import { migrateStore } from './migrate-store.js';
import { tokenCommand } from './token-command.js';
import { AccessFileError, readAccessFile } from './auth/index.js';
import { type DaemonOptions, OptionsError, parseOptions, USAGE } from './options.js';
import { Secrets, SecretsFileError } from './egress/index.js';
import { stderrLogger } from './log.js';
import { printable } from './terminal-text.js';

/**
 * `bermd [options]`: restores the deployed set, serves the control API, and prints where it listens.
 * `bermd migrate-store ...` moves a directory store into PostgreSQL (migrate-store.ts).
 */
export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate-store') return migrateStore(argv.slice(1));
  if (argv[0] === 'token') return tokenCommand(argv.slice(1));
  let options: DaemonOptions | 'help';
  try {
    options = await parseOptions(argv);
  } catch (e) {
    if (!(e instanceof OptionsError)) throw e;
    // The synopsis, not every option's description: the error stays on screen above it.
    process.stderr.write(`bermd: ${e.message}\n${USAGE.split('\n\n')[0]}\n(bermd --help describes each option)\n`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }

  // stdout carries exactly one line, the listening address; the structured log goes to stderr.
  // With secrets held (the store's password among them), every log line passes a last check for their
  // values before it is written; with a secrets file, the values SIGHUP reads later included.
  for (const password of options.store === undefined ? [] : storePasswords(options.store)) options.secrets.hide('store password', password);
  if (options.introspectionClient !== undefined) options.secrets.hide('introspection client secret', options.introspectionClient.secret);
  const logger = stderrLogger(options.logLevel, options.secrets);

  // The crash tests' seam (faults.ts), armed from the environment only.
  const fault = process.env[FAULT_ENV];
  if (fault !== undefined && fault !== '') {
    try {
      const { step, kind } = armFault(fault);
      logger.warn(
        { step, kind },
        `${FAULT_ENV} is set: bermd will ${kind === 'throw' ? 'fail with an error' : 'kill itself'} at this step (a test seam)`,
      );
    } catch (e) {
      process.stderr.write(`bermd: ${(e as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
  }

  const where = options.store === undefined ? { state: options.stateDir } : { store: storeLocation(options.store) };
  let daemon: Daemon;
  try {
    daemon = await createDaemon(options, logger);
  } catch (e) {
    // Only the error's words: an error from the database's driver may carry the connection's parameters.
    const reason = options.store === undefined ? (e as Error).message : reasonOf(e);
    logger.fatal({ err: reason, ...where }, 'cannot open the deployed set');
    const said =
      isBermdError(e) && e.code === 'store-unavailable'
        ? e.message
        : `cannot open ${options.store === undefined ? 'the state directory' : 'the store'} ${where.state ?? where.store}: ${reason}`;
    // The database's words, which repeat the names it was given: escaped, after the redaction.
    process.stderr.write(`bermd: ${printable(options.secrets.redact(said))}\n`);
    process.exitCode = 1;
    return;
  }

  const { app } = daemon;
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (e) {
    logger.fatal({ err: e }, 'cannot listen');
    process.stderr.write(`bermd: cannot listen on ${options.host}:${options.port}: ${(e as Error).message}\n`);
    process.exitCode = 1;
    await daemon.close();
    return;
  }

  if (daemon.metricsApp !== undefined && options.metricsListen !== undefined) {
    const at = options.metricsListen;
    try {
      await daemon.metricsApp.listen({ host: at.host, port: at.port });
    } catch (e) {
      logger.fatal({ err: e }, 'cannot listen for metrics');
      process.stderr.write(`bermd: cannot listen on ${at.host}:${at.port} (--metrics-listen): ${(e as Error).message}\n`);
      process.exitCode = 1;
      await daemon.close();
      return;
    }
    const bound = daemon.metricsApp.server.address();
    const metricsPort = typeof bound === 'object' && bound !== null ? bound.port : at.port;
    const metricsHost = at.host.includes(':') ? `[${at.host}]` : at.host;
    // On the log, not stdout, which carries the listening line alone.
    logger.info({ metrics: `http://${metricsHost}:${metricsPort}/metrics` }, 'serving /metrics for a scraper, without a token');
    if (!isLoopbackAddress(at.host))
      logger.warn({ host: at.host }, '/metrics is reachable from other machines without a token (--metrics-listen)');
  }

  // Before the listening line, which is what a supervisor (or a test) waits for before it signals.
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      // Asked again while draining (a second Ctrl-C, a supervisor that lost patience): the operator wants
      // out now. This loses what a crash would, no more: the stores keep each change whole or not at all,
      // and only the usage recorded since its last write goes. Non-zero, as the shell reports that signal.
      const code = 128 + osConstants.signals[signal];
      logger.warn(
        { signal, exit_code: code },
        'signalled again while shutting down: exiting at once, without waiting for what is under way',
      );
      process.exit(code);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await daemon.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', (s) => void stop(s));
  process.on('SIGINT', (s) => void stop(s));
  // Node's default for SIGHUP ends the process; here it rotates secrets and principals.
  process.on('SIGHUP', () => {
    void rereadSecrets(options, logger).then((ok) => {
      if (ok !== undefined) daemon.telemetry?.metrics.secretsReloaded(ok);
    });
    void rereadAccess(options, daemon, logger);
  });

  if (!isLoopbackAddress(options.host)) {
    const auth = options.token !== undefined || options.access !== undefined || options.oauthIssuer !== undefined;
    logger.warn(
      { host: options.host, auth },
      auth
        ? 'the control API is reachable from other machines; every request must carry the token'
        : 'the control API is reachable from other machines without auth (--insecure-no-auth)',
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  process.stdout.write(
    `bermd listening on http://${host}:${port} (${where.state === undefined ? `store: ${where.store}` : `state: ${where.state}`})\n`,
  );
}

/**
 * SIGHUP: reads the secrets file again and holds what it says from now on, without a restart. The log
 * names what was added, removed and changed, never a value; a file that no longer reads (gone, open to
 * others, not the JSON it must be) keeps the secrets held, and the log says why. Answers whether it read
 * (undefined: there is no file), for the reloads counter.
 */
async function rereadSecrets(options: DaemonOptions, logger: Logger): Promise<boolean | undefined> {
  const file = options.secretsFile;
  if (file === undefined) {
    logger.info({ signal: 'SIGHUP' }, 'SIGHUP: there is no secrets file to read again (--secrets)');
    return undefined;
  }
  let next: Secrets;
  try {
    next = await Secrets.load(file);
  } catch (e) {
    if (!(e instanceof SecretsFileError)) throw e;
    logger.error({ signal: 'SIGHUP', reason: e.message }, 'SIGHUP: the secrets file could not be read; the secrets held are kept');
    return false;
  }
  const change = options.secrets.replace(next);
  logger.info({ signal: 'SIGHUP', ...change, held: options.secrets.size }, 'SIGHUP: secrets read again');
  return true;
}

/**
 * SIGHUP: reads the `--access` file again. The log names the principals added, removed and changed
 * (a new token or new scopes), never a token or its hash; a file that no longer reads keeps those held.
 */
async function rereadAccess(options: DaemonOptions, daemon: Daemon, logger: Logger): Promise<void> {
  const file = options.accessFile;
  if (file === undefined || daemon.principals === undefined) return;
  try {
    const change = daemon.principals.replace(await readAccessFile(file));
    logger.info({ signal: 'SIGHUP', ...change, held: daemon.principals.size }, 'SIGHUP: principals read again');
  } catch (e) {
    if (!(e instanceof AccessFileError)) throw e;
    logger.error({ signal: 'SIGHUP', reason: e.message }, 'SIGHUP: the access file could not be read; the principals held are kept');
  }
}
