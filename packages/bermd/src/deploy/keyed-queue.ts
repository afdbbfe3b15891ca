/**
 * Operations on one key run one after another, in the order they came; different keys proceed
 * concurrently. The registry runs each name's deploys, undeploys, usage writes and convergence through
 * one, and the directory store's lock on a name is one (a state directory belongs to one process).
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `op` once every earlier operation on `key` has settled; answers what it answers. */
  run<T>(key: string, op: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(op, op);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return run;
  }

  /** Keys with an operation under way or waiting. */
  get size(): number {
    return this.tails.size;
  }

  /** Resolves once every operation queued so far, and every one they queued meanwhile, has settled. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled([...this.tails.values()]);
  }
}
