import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BermClient } from '@berm/client';
import { printable } from '@berm/format/printable';
import { parseDuration } from '@berm/protocol';
import type { CommandContext, Parsed } from '../context.js';
import { stdoutPaint } from '../colour.js';
import type { EmbeddedDaemon } from '../dev/embedded.js';
import { CliError, describeFailure } from '../failure.js';

/** Why the loop ended: asked to (a signal), or its embedded daemon went away. */
type Stop = { signal: NodeJS.Signals } | { died: Awaited<EmbeddedDaemon['exited']> };

export interface DevFlags {
  url?: string;
  token?: string;
  embedded: boolean;
  force: boolean;
  debounce: string;
}

export async function dev({ args, flags }: Parsed<{ dir: string }, DevFlags>, ctx: CommandContext): Promise<void> {
  const debounceMs = parseDuration(flags.debounce);
  if (debounceMs === undefined || debounceMs > 60_000) {
    throw new CliError(
      'usage',
      `--debounce ${printable(flags.debounce)} is not a duration up to 1m (e.g. 200ms, 1s); see '${ctx.helpCommand} --help'`,
    );
  }
  const dir = args.dir;
  if (!existsSync(join(dir, 'assembly', 'index.ts'))) {
    throw new CliError(
      'no-entry',
      `${printable(join(dir, 'assembly/index.ts'))} does not exist: a harness's entry is assembly/index.ts (crab new NAME writes a project)`,
      { dir },
    );
  }
  const paint = await stdoutPaint();
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  const report = (e: unknown): void => void process.stderr.write(`${ctx.bin}: ${printable(describeFailure(e, ctx.helpCommand).line)}\n`);

  const { client, embedded } = await daemon(flags, ctx);
  // Asked again while stopping: out at once, the daemon with it, as the shell reports that signal.
  const again = (signal: NodeJS.Signals): void => {
    if (embedded !== undefined) process.kill(embedded.pid, 'SIGKILL');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  // From here on a signal stops the loop rather than the process, whatever is under way.
  const stopping = stopped(embedded, again);
  if (embedded === undefined) out(`${paint.dim('bermd:')} ${printable(client.url)}`);
  else
    out(
      `${paint.dim('bermd:')} embedded, pid ${embedded.pid}, listening on ${embedded.url} (state: ${printable(embedded.stateDir)}, removed when crab dev stops)`,
    );

  const [{ Rebuilds }, { round }, { watchSources }] = await Promise.all([
    import('../dev/rebuilds.js'),
    import('../dev/round.js'),
    import('../dev/watch.js'),
  ]);
  const changed = new Set<string>();
  const rebuilds = new Rebuilds(
    async () => {
      if (changed.size > 0) out(`${paint.dim('changed:')} ${printable([...changed].join(', '))}`);
      changed.clear();
      await round({ dir, client, force: flags.force, paint });
    },
    debounceMs,
    report,
  );
  const watch = await watchSources(
    dir,
    (path) => {
      changed.add(path || '.');
      rebuilds.touch();
    },
    report,
  );
  out(`${paint.dim('watching:')} ${printable(dir)} (assembly/, package.json, README.md); Ctrl-C stops`);
  rebuilds.now();

  const stop = await stopping;
  out(`${paint.dim('stopping')}${'signal' in stop ? ` (${stop.signal})` : ''}`);
  await watch.close();
  await rebuilds.close();
  await client.close();
  await embedded?.stop();
  process.off('SIGINT', again).off('SIGTERM', again);
  if ('died' in stop) {
    const { code, signal, log } = stop.died;
    throw new CliError(
      'embedded-daemon-failed',
      `the embedded bermd exited (${code ?? signal}) while crab dev ran${log ? `; it logged:\n${printable(log)}` : ''}`,
    );
  }
  out(paint.dim('stopped'));
}

/** The daemon to deploy to: the one named, the default one if it answers, else one started here. */
async function daemon(
  flags: { url?: string; token?: string; embedded: boolean },
  ctx: CommandContext,
): Promise<{ client: BermClient; embedded?: EmbeddedDaemon }> {
  if (!flags.embedded) {
    const client = await ctx.connect(flags);
    if (flags.url !== undefined || (await answers(client))) return { client };
    await client.close();
  }
  const [{ startEmbedded }, { BermClient }] = await Promise.all([import('../dev/embedded.js'), import('@berm/client')]);
  const embedded = await startEmbedded();
  // Its own daemon, which asks for no token: none is sent, the user's stays with the daemons it is for.
  return { client: new BermClient(embedded.url), embedded };
}

/** Whether anything answers at the client's address (a refusal of the token is an answer). */
async function answers(client: BermClient): Promise<boolean> {
  const { isBermClientError } = await import('@berm/client');
  try {
    await client.whoami();
    return true;
  } catch (e) {
    return !(isBermClientError(e) && e.code === 'daemon-unreachable');
  }
}

/**
 * Resolves at the first SIGINT or SIGTERM, or when the embedded daemon exits on its own; from then on,
 * a signal goes to `again` (set in the same turn, so that none finds Node's default, which would leave the daemon).
 */
function stopped(embedded: EmbeddedDaemon | undefined, again: (signal: NodeJS.Signals) => void): Promise<Stop> {
  return new Promise((resolve) => {
    const end = (why: Stop): void => {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      process.once('SIGINT', again).once('SIGTERM', again);
      resolve(why);
    };
    const onSignal = (signal: NodeJS.Signals): void => end({ signal });
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    void embedded?.exited.then((died) => end({ died }));
  });
}
