// A usage write that fails. With the store out of reach (store-unavailable) it is tried again every few
// seconds until the store answers; refused for any other reason, the same rows would be refused every
// few seconds forever, so it is logged once, with the reason, and not tried again on its own: the uses
// go with the next use's write, or the one at close. The registry's timers are the test's (vitest's fake
// timers): what is scheduled is counted, never waited for.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BermdError } from 'bermd';
import { DirectoryStore, type HarnessStore, Registry, type UsageRecord } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { removeDir, tempDir } from './daemon.js';

/** The real setTimeout, taken before any test fakes it: the bound of every wait below. */
const realSetTimeout = globalThis.setTimeout;

/** A directory store whose usage writes fail with `failure` while it is set; counts the writes tried. */
class FailingUsage implements HarnessStore {
  failure: unknown;
  tried = 0;
  constructor(private readonly inner: DirectoryStore) {}
  get location(): string {
    return this.inner.location;
  }
  names = () => this.inner.names();
  heads = () => this.inner.heads();
  head = (name: string) => this.inner.head(name);
  load = (name: string) => this.inner.load(name);
  sweep = () => this.inner.sweep();
  readImage = (name: string) => this.inner.readImage(name);
  transaction: HarnessStore['transaction'] = (name, work) => this.inner.transaction(name, work);
  history: HarnessStore['history'] = (name, query) => this.inner.history(name, query);
  retained = (name: string) => this.inner.retained(name);
  readRetained = (name: string, digest: string) => this.inner.readRetained(name, digest);
  undeployed = () => this.inner.undeployed();
  prune = () => this.inner.prune();
  close = () => this.inner.close();
  async saveUsage(name: string, used: UsageRecord, lastUsedAt: string | null): Promise<void> {
    this.tried++;
    if (this.failure !== undefined) throw this.failure;
    await this.inner.saveUsage(name, used, lastUsedAt);
  }
}

type Line = Record<string, unknown>;

/** A debug-level logger whose lines are kept, and awaited by what they say (bounded by real time). */
function capturing(): { logger: pino.Logger; lines: Line[]; nth(msg: string, n: number): Promise<Line> } {
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      for (const check of [...waiters]) check();
      done();
    },
  });
  const nth = (msg: string, n: number): Promise<Line> =>
    new Promise((resolve, reject) => {
      const bound = realSetTimeout(() => {
        waiters.delete(check);
        reject(new Error(`waited 10 s for log line ${n} saying "${msg}"; the log holds ${JSON.stringify(lines)}`));
      }, 10_000);
      const check = (): void => {
        const found = lines.filter((l) => l.msg === msg)[n - 1];
        if (found === undefined) return;
        waiters.delete(check);
        clearTimeout(bound);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  return { logger: pino({ level: 'debug' }, sink), lines, nth };
}

const REFUSED = 'could not write usage, the store refused it; kept, and written with the next use';
const UNREACHABLE = 'could not write usage; kept, and tried again';
const WRITTEN_AGAIN = 'usage written again';

describe('a usage write that fails', () => {
  let stateDir: string;
  let store: FailingUsage;
  let log: ReturnType<typeof capturing>;
  let registry: Registry;

  beforeEach(async () => {
    stateDir = await tempDir('bermd-usage-');
    store = new FailingUsage(await DirectoryStore.open(stateDir));
    log = capturing();
    registry = await Registry.open({ stateDir, store, logger: log.logger });
    await registry.deploy('h', await harnessImage(manifestWithTools(['echo'])));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(async () => {
    vi.useRealTimers();
    store.failure = undefined;
    await registry.close();
    await removeDir(stateDir);
  });

  const storedUse = async (): Promise<string | undefined> => (await (await DirectoryStore.open(stateDir)).head('h'))?.used.tools.echo;

  it('refused by the store: logged once at level error with the reason, not tried again on its own, written with the next use', async () => {
    store.failure = Object.assign(new Error('permission denied for table berm_usage'), { code: '42501' });
    registry.recordUse('h', { tool: 'echo' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await log.nth(REFUSED, 1)).toMatchObject({
      level: 50,
      harness: 'h',
      code: '42501',
      err: 'permission denied for table berm_usage',
    });
    expect(store.tried).toBe(1);
    // Nothing is scheduled: an hour passes without another try.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3600_000);
    expect(store.tried).toBe(1);
    expect(registry.usage('h')?.tools.echo).toBeDefined();

    // The next use's write carries it; refused again, it is logged at debug, not again at error.
    registry.recordUse('h', { tool: 'echo' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await log.nth(REFUSED, 2)).toMatchObject({ level: 20, code: '42501' });
    expect(store.tried).toBe(2);
    expect(vi.getTimerCount()).toBe(0);

    store.failure = undefined;
    registry.recordUse('h', { tool: 'echo' });
    await vi.advanceTimersByTimeAsync(5000);
    await log.nth(WRITTEN_AGAIN, 1);
    expect(await storedUse()).toBe(registry.usage('h')?.tools.echo);
    expect(log.lines.filter((l) => l.level === 50)).toHaveLength(1);
  });

  it('refused by the store, then closed: the close tries once more and writes it', async () => {
    store.failure = new Error('disk full');
    registry.recordUse('h', { tool: 'echo' });
    await vi.advanceTimersByTimeAsync(5000);
    await log.nth(REFUSED, 1);
    const used = registry.usage('h')?.tools.echo;
    store.failure = undefined;
    vi.useRealTimers();
    await registry.close();
    expect(store.tried).toBe(2);
    expect(await storedUse()).toBe(used);
  });

  it('with the store out of reach: tried again every few seconds until it answers', async () => {
    store.failure = new BermdError('store-unavailable', 'the store postgres://berm@db/berm cannot be reached: ECONNREFUSED');
    registry.recordUse('h', { tool: 'echo' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await log.nth(UNREACHABLE, 1)).toMatchObject({ level: 40, code: 'store-unavailable' });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(await log.nth(UNREACHABLE, 2)).toMatchObject({ level: 20 });
    expect(store.tried).toBe(2);

    store.failure = undefined;
    await vi.advanceTimersByTimeAsync(5000);
    await log.nth(WRITTEN_AGAIN, 1);
    expect(store.tried).toBe(3);
    expect(await storedUse()).toBe(registry.usage('h')?.tools.echo);
  });
});
