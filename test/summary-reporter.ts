import type { SerializedError } from 'vitest';
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

/**
 * Ends a run with one plain line, `N passed, N failed` (`, N skipped` when some were), after the
 * default reporter's summary: a line that tools reading a run's outcome recognise whatever the runner.
 *
 * Failures are more than failed tests: a file that could not be loaded, a suite or file whose setup
 * (beforeAll, afterAll) threw, and each error no test caught are failures too. When a beforeAll throws,
 * vitest marks the tests under it skipped, so counting tests alone would end a broken run with
 * "0 failed". Each failing file or suite counts once, whatever number of errors it had. A file the run
 * was to test and never did (the run's global setup threw) is a failure as well.
 */
export default class SummaryReporter implements Reporter {
  private planned = 0;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.planned = new Set(specifications.map((s) => s.moduleId)).size;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    const count = { passed: 0, failed: Math.max(0, this.planned - testModules.length), skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) count[test.result().state]++;
      if (module.errors().length > 0) count.failed++;
      for (const suite of module.children.allSuites()) if (suite.errors().length > 0) count.failed++;
    }
    count.failed += unhandledErrors.length;
    const skipped = count.skipped + count.pending;
    process.stdout.write(`${count.passed} passed, ${count.failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }
}
