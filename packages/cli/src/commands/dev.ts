import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type { BermClient } from '@berm/client';
import { printable } from '@berm/format/printable';
import { parseDuration } from '@berm/protocol';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { daemonFlags } from '../daemon.js';
import type { EmbeddedDaemon } from '../dev/embedded.js';
import { CliError, describeFailure } from '../failure.js';

/** Why the loop ended: asked to (a signal), or its embedded daemon went away. */
type Stop = { signal: NodeJS.Signals } | { died: Awaited<EmbeddedDaemon['exited']> };

export default class Dev extends BaseCommand {
  // A loop prints as it goes, for as long as it runs: there is no one document to give.
  static enableJsonFlag = false;
  static summary = 'Build, deploy, and again on every save.';
  static description =
    "Builds DIR (as crab build does) and deploys it under the package's name to bermd at --url or BERM_URL; when neither is given and nothing answers at the default address, or with --embedded, it starts a bermd of its own (the bermd package's, on a free loopback port, with a temporary state directory removed when it stops) and prints where it listens. Then it watches DIR's assembly/**, package.json and README.md: once saves have been quiet for --debounce it builds again, printing the compiler's errors located in the source (nothing is deployed, what was served still is), and deploys, printing what the build changes in the served manifest (tools added, removed, changed, with their breaks) and the gate's verdict. A break of a tool or event callers used lately is refused as crab deploy refuses it, and nothing is deployed, unless --force. A save during a build queues one more build. Ctrl-C or SIGTERM stops the watch and the bermd it started, and exits 0.";
  static examples = [
    '<%= config.bin %> dev',
    '<%= config.bin %> dev weather --url http://127.0.0.1:7477',
    '<%= config.bin %> dev --embedded --debounce 500ms',
  ];

  static args = {
    dir: Args.string({ description: 'the project directory', default: '.' }),
  };

  static flags = {
    ...daemonFlags,
    embedded: Flags.boolean({
      description: 'start a bermd of its own, whatever --url and BERM_URL say or the default address answers',
      default: false,
    }),
    force: Flags.boolean({ description: 'deploy even when a build breaks what callers used lately', default: false }),
    debounce: Flags.string({
      description: 'how long saves must be quiet before a build starts (a duration: 200ms, 1s)',
      default: '200ms',
      helpValue: 'DURATION',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Dev);
    const debounceMs = parseDuration(flags.debounce);
    if (debounceMs === undefined || debounceMs > 60_000) {
      throw new CliError(
        'usage',
        `--debounce ${printable(flags.debounce)} is not a duration up to 1m (e.g. 200ms, 1s); see '${this.helpCommand} --help'`,
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
    const report = (e: unknown): void =>
      void process.stderr.write(`${this.config.bin}: ${printable(describeFailure(e, this.helpCommand).line)}\n`);

    const { client, embedded } = await this.daemon(flags);
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
  private async daemon(flags: {
    url?: string;
    token?: string;
    embedded: boolean;
  }): Promise<{ client: BermClient; embedded?: EmbeddedDaemon }> {
    if (!flags.embedded) {
      const client = await this.connect(flags);
      if (flags.url !== undefined || (await answers(client))) return { client };
      await client.close();
    }
    const [{ startEmbedded }, { BermClient }] = await Promise.all([import('../dev/embedded.js'), import('@berm/client')]);
    const embedded = await startEmbedded();
    // Its own daemon, which asks for no token: none is sent, the user's stays with the daemons it is for.
    return { client: new BermClient(embedded.url), embedded };
  }
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
