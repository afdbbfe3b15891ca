// Loaded into a server bench/gc.js measures (`node --expose-gc --import bench/lib/gc-probe.js ...`):
// what its main thread's garbage collector did over a window the benchmark opens and closes with SIGHUP.
// The first SIGHUP collects everything (so every window starts from the same state: nothing dead left
// in the old generation, every long-lived structure in it) and starts V8's GC profiler; the second
// stops it and writes one line to stderr, {"gc": {...}}: the time of the young-generation collections
// (scavenges), what they found allocated, what survived them and what they moved to the old generation;
// and how many full collections ran. Measurement only; nothing here is part of bermd.
import v8 from 'node:v8';

const used = (stats, name) => stats.heapSpaceStatistics.find((s) => s.spaceName === name)?.spaceUsedSize ?? 0;
const old = (stats) => used(stats, 'old_space') + used(stats, 'code_space') + used(stats, 'large_object_space');

let profiler;
process.on('SIGHUP', () => {
  if (profiler === undefined) {
    globalThis.gc();
    profiler = new v8.GCProfiler();
    profiler.start();
    return;
  }
  const { statistics } = profiler.stop();
  profiler = undefined;
  const out = { scavengeUs: 0, allocated: 0, survived: 0, promoted: 0, full: 0 };
  // What the young generation holds after a collection is there before the next: allocated is the growth between them.
  let youngAfter = 0;
  for (const s of statistics) {
    if (s.gcType === 'Scavenge') {
      out.scavengeUs += s.cost;
      out.allocated += Math.max(0, used(s.beforeGC, 'new_space') - youngAfter);
      out.survived += used(s.afterGC, 'new_space');
      out.promoted += Math.max(0, old(s.afterGC) - old(s.beforeGC));
    } else if (s.gcType === 'MarkSweepCompact') {
      out.full++;
    }
    youngAfter = used(s.afterGC, 'new_space');
  }
  process.stderr.write(`${JSON.stringify({ gc: out })}\n`);
});
