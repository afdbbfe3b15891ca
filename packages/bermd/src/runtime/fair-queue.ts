/**
 * Who gets the next worker. One queue in front of the workers is first come, first served: four runaway
 * calls of one harness, queued ahead of another harness's calls, hold every worker until their time
 * limit, and the other harness's trivial calls wait behind them (as they did behind piscina's queue, which
 * bermd ran on first: their p99 became the runaway calls' limit). So the runner hands the pool (pool.ts) only
 * what may run now, and keeps the rest here:
 *
 * - each harness has its own line, and runs at most its `limit` calls at once (`max_concurrency`);
 * - at most `workers` calls run in all, the size of the pool, which has no queue of its own;
 * - a freed worker goes to the next harness in turn that has a call waiting and is under its limit
 *   (round robin between harnesses, first come first served within one);
 * - a line holds at most `maxQueue` waiting calls; past that a call is refused at once.
 *
 * A call is counted against the harness it entered through: its nested `berm.call`s run on the same
 * worker (chain.ts), so they take no other worker and wait for no other line.
 */

/** A call's place: started (holding a worker) or waiting in its harness's line. */
export interface Turn {
  readonly harness: string;
  readonly started: boolean;
  /** How many calls of its harness were waiting ahead of it when it joined the line (0 when it started at once). */
  readonly ahead: number;
  /** Gives the worker back, or leaves the line; once. */
  leave(): void;
}

interface Waiting extends Turn {
  started: boolean;
  start: () => void;
}

interface Line {
  harness: string;
  limit: number;
  running: number;
  waiting: Waiting[];
}

export class FairQueue {
  private readonly lines = new Map<string, Line>();
  /** Lines with calls waiting, in the order they are next served. */
  private readonly turns: Line[] = [];
  private running = 0;

  constructor(
    /** How many calls may run at once in all: the pool's size. */
    readonly workers: number,
    /** How many calls one harness may have waiting. */
    readonly maxQueue: number,
  ) {}

  /** Calls running now. */
  get active(): number {
    return this.running;
  }

  /** Calls waiting now, in every line. */
  get queued(): number {
    let n = 0;
    for (const line of this.turns) n += line.waiting.length;
    return n;
  }

  /** Calls waiting, by harness (only harnesses with some). Made when asked: a scrape, not a call. */
  waitingByHarness(): Map<string, number> {
    const out = new Map<string, number>();
    for (const line of this.turns) out.set(line.harness, line.waiting.length);
    return out;
  }

  /**
   * A turn for a call of `harness`, which runs at most `limit` calls at once: `start` is called (now or
   * when its turn comes) once it may run. Undefined, and `start` never called, when its line is full.
   */
  enter(harness: string, limit: number, start: () => void): Turn | undefined {
    let line = this.lines.get(harness);
    if (line === undefined) {
      line = { harness, limit, running: 0, waiting: [] };
      this.lines.set(harness, line);
    }
    // A redeploy may change the limit; the latest call's is the harness's now.
    line.limit = Math.max(1, limit);
    if (line.waiting.length === 0 && line.running < line.limit && this.running < this.workers) {
      const turn = this.turn(line, 0, start);
      this.begin(line, turn);
      return turn;
    }
    if (line.waiting.length >= this.maxQueue) {
      this.forget(line);
      return undefined;
    }
    const turn = this.turn(line, line.waiting.length, start);
    line.waiting.push(turn);
    if (line.waiting.length === 1) this.turns.push(line);
    return turn;
  }

  private turn(line: Line, ahead: number, start: () => void): Waiting {
    let left = false;
    const turn: Waiting = {
      harness: line.harness,
      started: false,
      ahead,
      start,
      leave: () => {
        if (left) return;
        left = true;
        if (turn.started) {
          line.running--;
          this.running--;
          this.next();
        } else {
          const at = line.waiting.indexOf(turn);
          if (at >= 0) line.waiting.splice(at, 1);
          if (line.waiting.length === 0) this.turns.splice(this.turns.indexOf(line), 1);
        }
        this.forget(line);
      },
    };
    return turn;
  }

  private begin(line: Line, turn: Waiting): void {
    line.running++;
    this.running++;
    turn.started = true;
    turn.start();
  }

  /** Hands freed workers to waiting calls, harness after harness. */
  private next(): void {
    while (this.running < this.workers) {
      const at = this.turns.findIndex((line) => line.running < line.limit);
      if (at < 0) return;
      const line = this.turns[at]!;
      this.turns.splice(at, 1);
      const turn = line.waiting.shift()!;
      // Served: to the back of the round, if it still has calls waiting.
      if (line.waiting.length > 0) this.turns.push(line);
      this.begin(line, turn);
    }
  }

  /** A line with nothing running and nothing waiting is dropped, so names that come and go leave nothing. */
  private forget(line: Line): void {
    if (line.running === 0 && line.waiting.length === 0 && this.lines.get(line.harness) === line) this.lines.delete(line.harness);
  }
}
