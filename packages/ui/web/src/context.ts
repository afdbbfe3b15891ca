/** What every view reads from the page: the deployed set as last listed, and the latest change. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { HarnessChange, HarnessSummary } from './types.js';

export interface PageState {
  /** Undefined until the first list arrives. */
  harnesses: HarnessSummary[] | undefined;
  /** The latest deploy or undeploy, numbered so that views can refetch once per change. */
  change: { seq: number; message: HarnessChange | undefined };
  /** A request answered 401: the page asks for the token. */
  unauthorized(): void;
}

export const Page = createContext<PageState>({
  harnesses: undefined,
  change: { seq: 0, message: undefined },
  unauthorized: () => undefined,
});

export const usePage = (): PageState => useContext(Page);
