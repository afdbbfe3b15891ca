import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/summary-reporter.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Refuses to run against a dist/ older than its src/; then starts the PostgreSQL server the store tests share (see the files).
    globalSetup: ['test/build-freshness.ts', 'test/postgres-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', new SummaryReporter()],
  },
});
