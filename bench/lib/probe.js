// Loaded into a bermd the soak benchmark starts (`node --expose-gc --import bench/lib/probe.js`): on
// SIGUSR2 it collects garbage and writes one line to stderr, {"probe": {rss, heapUsed, external, handles,
// fds, threads}} (threads: the process's, worker threads included, each with its own V8 heap in RSS), so what the daemon holds is read from inside it without a line of bermd knowing. Measurement
// only; nothing here is part of bermd.
import { readdirSync } from 'node:fs';

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const { rss, heapUsed, external } = process.memoryUsage();
  const count = (dir) => {
    try {
      return readdirSync(dir).length;
    } catch {
      return 0; // Not Linux: nothing to count.
    }
  };
  const handles = process.getActiveResourcesInfo().length;
  process.stderr.write(
    `${JSON.stringify({ probe: { rss, heapUsed, external, handles, fds: count('/proc/self/fd'), threads: count('/proc/self/task') } })}\n`,
  );
});
