/**
 * The text forms the page shares with the CLI: they need no terminal, filesystem or daemon connection
 * (the page renders signatures and harness rows as `crab` does). The CLI imports each module by its
 * own subpath (`@berm/format/printable`), so a command loads only the forms it prints.
 */
export { renderSchema, renderArguments } from './schema.js';
export { ago, deployedByText, shortDigest, limitsText, grantsText } from './harness.js';
