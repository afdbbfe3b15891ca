/** What every view reads from the page: who is signed in, the deployed set as last listed, and the latest change. */
import { SCOPES } from '@berm/protocol';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Principal } from './principal.js';
import type { HarnessChange, HarnessSummary } from './types.js';

export interface PageState {
  /** Who the page is signed in as: what it offers follows from its scopes. */
  principal: Principal;
  /** Undefined until the first list arrives (and for good without `berm:read`). */
  harnesses: HarnessSummary[] | undefined;
  /** The latest deploy or undeploy, numbered so that views can refetch once per change. */
  change: { seq: number; message: HarnessChange | undefined };
  /** A request answered 401: the page signs in again. */
  unauthorized(): void;
}

export const Page = createContext<PageState>({
  principal: new Principal('anonymous', SCOPES),
  harnesses: undefined,
  change: { seq: 0, message: undefined },
  unauthorized: () => undefined,
});

export const usePage = (): PageState => useContext(Page);
