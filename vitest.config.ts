import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/summary-reporter.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', new SummaryReporter()],
  },
});
