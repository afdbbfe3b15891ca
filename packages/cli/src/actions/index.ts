/**
 * Each command's work, apart from oclif's classes: a function of what was parsed and a CommandContext,
 * which the command's class (src/commands/) calls after oclif's parse, and the fast path (fast-path.ts)
 * after its own reading. This door loads one command's module, and only it, for the fast path.
 */
import type { CommandContext, Parsed } from '../context.js';

// The parsed shapes are each command's own; the fast path hands over what the manifest's table says,
// which test/fast-path.test.ts holds equal to oclif's parse.
// biome-ignore lint/suspicious/noExplicitAny: each command's work takes its own parsed shape
export type Work = (parsed: Parsed<any, any>, context: CommandContext) => Promise<unknown>;

const WORK: Readonly<Record<string, () => Promise<Work>>> = {
  breaks: async () => (await import('./breaks.js')).breaks,
  build: async () => (await import('./build.js')).build,
  call: async () => (await import('./call.js')).call,
  deploy: async () => (await import('./deploy.js')).deploy,
  dev: async () => (await import('./dev.js')).dev,
  history: async () => (await import('./history.js')).history,
  inspect: async () => (await import('./inspect.js')).inspect,
  login: async () => (await import('./login.js')).login,
  logout: async () => (await import('./logout.js')).logout,
  ls: async () => (await import('./ls.js')).ls,
  mcp: async () => (await import('./mcp.js')).mcp,
  new: async () => (await import('./new.js')).newProject,
  pull: async () => (await import('./pull.js')).pull,
  push: async () => (await import('./push.js')).push,
  receipts: async () => (await import('./receipts.js')).receipts,
  'registry:login': async () => (await import('./registry-login.js')).registryLogin,
  'registry:logout': async () => (await import('./registry-logout.js')).registryLogout,
  rollback: async () => (await import('./rollback.js')).rollback,
  run: async () => (await import('./run.js')).runTool,
  undeploy: async () => (await import('./undeploy.js')).undeploy,
};

/** The ids of the commands whose work is here: every one of crab's own. */
export const COMMAND_IDS: ReadonlySet<string> = new Set(Object.keys(WORK));

/** The work of command `id`, loaded. */
export function loadWork(id: string): Promise<Work> {
  const load = WORK[id];
  if (load === undefined) throw new Error(`no work for the command ${id}`);
  return load();
}
