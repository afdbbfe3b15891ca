/**
 * When `crab dev` rebuilds: once saves have been quiet for the debounce window (an editor's save is
 * often several writes, a checkout many), and never two builds at once. A save during a build queues
 * exactly one more, which starts when that build ends: however many saves came, one build sees them all.
 */
export class Rebuilds {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private queued = false;
  private closed = false;

  /** `build` reports its own failures; one it lets through goes to `onError`, and the loop goes on. */
  constructor(
    private readonly build: () => Promise<void>,
    private readonly debounceMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** A build now, without the window: the first one, at start. */
  now(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.due();
  }

  /** A save: the window starts again. */
  touch(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.due();
    }, this.debounceMs);
  }

  /** Whether a build is under way. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  private due(): void {
    if (this.closed) return;
    if (this.running !== undefined) this.queued = true;
    else this.start();
  }

  private start(): void {
    this.running = (async () => {
      try {
        await this.build();
      } catch (e) {
        this.onError(e);
      }
    })().finally(() => {
      this.running = undefined;
      if (this.queued && !this.closed) {
        this.queued = false;
        this.start();
      }
    });
  }

  /** No more builds: a pending window is dropped, a queued build too; resolves when the one under way ends. */
  async close(): Promise<void> {
    this.closed = true;
    this.queued = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
