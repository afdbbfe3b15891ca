/**
 * The CLI's text forms that need no terminal, filesystem or daemon connection, for other readers
 * of the same data (the web page renders signatures and harness rows as `crab` does).
 */
export { renderSchema, renderArguments } from './schema.js';
export { ago, deployedByText, shortDigest, limitsText, grantsText } from './harness.js';
