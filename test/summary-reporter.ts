import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `N passed, N failed` (`, N skipped` when some were), after the
 * default reporter's summary: a line that tools reading a run's outcome recognise whatever the runner.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) count[test.result().state]++;
    }
    const skipped = count.skipped + count.pending;
    process.stdout.write(`${count.passed} passed, ${count.failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }
}
