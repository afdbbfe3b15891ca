/**
 * The live figures the page charts (`GET /figures`, `GET /harnesses/{name}/figures`): per deployed
 * harness and tool of its manifest, what `FigureRing` keeps, in this process's memory. They are not
 * OpenTelemetry's: they are kept whether or not metrics are exported or `OTEL_SDK_DISABLED` is set. Only
 * what is deployed is kept: a call naming anything else changes nothing, a harness undeployed drops its
 * figures, and a tool's rings are allocated at its first call, so a tool never called holds none.
 */
import { FIGURES_HOUR_POINTS, type FiguresSummary, type HarnessFigures, type HourSeries } from '@berm/protocol';
import { emptyHour, emptyWindow, FIGURES_ERROR, FigureRing, MINUTE_MS, MINUTE_SLOTS, SLOT_MS } from './figure-ring.js';
import { outcomeOf } from './outcomes.js';

/** A monotonic clock in milliseconds; `performance.now()` unless a test gives its own. */
export type Clock = () => number;

interface Kept {
  /** Each tool of the manifest, with its rings once it was called. */
  tools: Map<string, FigureRing | undefined>;
  /** When counting began, as the answer says it. */
  since: string;
  /** When the last call ended (the clock's), or -Infinity. */
  lastCall: number;
  /** Calls since the last `takeChanged`. */
  called: boolean;
}

export class LiveFigures {
  private readonly kept = new Map<string, Kept>();
  private lastTaken: number;

  constructor(
    private readonly clock: Clock = () => performance.now(),
    private readonly wallClock: () => number = Date.now,
  ) {
    this.lastTaken = clock();
  }

  /** `name` serves `tools` now (a deploy, a replace, a restore): figures of a tool it still has are kept. */
  deployed(name: string, tools: readonly string[]): void {
    const before = this.kept.get(name);
    const kept = new Map<string, FigureRing | undefined>();
    for (const tool of tools) kept.set(tool, before?.tools.get(tool));
    this.kept.set(name, {
      tools: kept,
      since: before?.since ?? new Date(this.wallClock()).toISOString(),
      lastCall: before?.lastCall ?? Number.NEGATIVE_INFINITY,
      called: before?.called ?? false,
    });
  }

  /** `name` is undeployed: its figures go. */
  forget(name: string): void {
    this.kept.delete(name);
  }

  /** A call ended, as the runtime tells it (`CallEndListener`): counted when its harness and tool are deployed. */
  callEnded(
    harness: string | undefined,
    tool: string | undefined,
    code: string | undefined,
    waitSeconds?: number,
    runSeconds?: number,
  ): void {
    if (harness === undefined || tool === undefined) return;
    const kept = this.kept.get(harness);
    if (kept === undefined || !kept.tools.has(tool)) return;
    const now = this.clock();
    let ring = kept.tools.get(tool);
    if (ring === undefined) kept.tools.set(tool, (ring = new FigureRing(now)));
    const ms = waitSeconds === undefined && runSeconds === undefined ? undefined : ((waitSeconds ?? 0) + (runSeconds ?? 0)) * 1000;
    ring.record(now, outcomeOf(code), ms);
    kept.lastCall = now;
    kept.called = true;
  }

  /** `name`'s figures, every tool of its manifest; undefined when it is not deployed. */
  harness(name: string): HarnessFigures | undefined {
    const kept = this.kept.get(name);
    if (kept === undefined) return undefined;
    const now = this.clock();
    return {
      name,
      since: kept.since,
      percentile_error: FIGURES_ERROR,
      tools: [...kept.tools].map(([tool, ring]) => {
        if (ring === undefined) return { name: tool, since_start: emptyWindow(), last_minute: emptyWindow(), last_hour: emptyHour() };
        const last_hour = emptyHour();
        ring.addLastHour(now, last_hour);
        return { name: tool, since_start: ring.sinceStart(), last_minute: ring.lastMinute(now), last_hour };
      }),
    };
  }

  /** Every deployed harness's calls and failures per minute over the hour, by name. */
  summary(): FiguresSummary {
    const now = this.clock();
    const harnesses = [...this.kept.keys()].sort().map((name) => ({ name, last_hour: this.hourOf(this.kept.get(name)!, now) }));
    return { harnesses };
  }

  /**
   * The harnesses whose figures moved since the last time this was asked: those called since, and those
   * whose last minute (a ten-second slot passed) or last hour (a minute passed) dropped calls it held.
   */
  takeChanged(): string[] {
    const now = this.clock();
    const slotPassed = Math.floor(now / SLOT_MS) !== Math.floor(this.lastTaken / SLOT_MS);
    const minutePassed = Math.floor(now / MINUTE_MS) !== Math.floor(this.lastTaken / MINUTE_MS);
    this.lastTaken = now;
    const changed: string[] = [];
    for (const [name, kept] of this.kept) {
      const age = now - kept.lastCall;
      if (
        kept.called ||
        (slotPassed && age < (MINUTE_SLOTS + 1) * SLOT_MS) ||
        (minutePassed && age < (FIGURES_HOUR_POINTS + 1) * MINUTE_MS)
      )
        changed.push(name);
      kept.called = false;
    }
    return changed;
  }

  private hourOf(kept: Kept, now: number): HourSeries {
    const hour = emptyHour();
    for (const ring of kept.tools.values()) ring?.addLastHour(now, hour);
    return hour;
  }
}
