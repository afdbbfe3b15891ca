/** The page: a header, the view the URL names, the deployed set kept current from `/events`. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { followChanges, type StreamState } from './changes.js';
import { listHarnesses, isUnauthorized } from './api.js';
import { Page, type PageState } from './context.js';
import { href, useRoute } from './router.js';
import { authHeaders, setToken } from './token.js';
import type { HarnessChange, HarnessSummary } from './types.js';
import { ErrorNote } from './widgets.js';
import { Deploy } from './views/Deploy.js';
import { Harness } from './views/Harness.js';
import { List } from './views/List.js';
import { TokenPrompt } from './views/Token.js';
import { Try } from './views/Try.js';

const STATE_TEXT: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  offline: 'Reconnecting…',
  unauthorized: 'Token needed',
};

export function App() {
  const route = useRoute();
  const [harnesses, setHarnesses] = useState<HarnessSummary[] | undefined>(undefined);
  const [listError, setListError] = useState<unknown>(undefined);
  const [change, setChange] = useState<PageState['change']>({ seq: 0, message: undefined });
  const [stream, setStream] = useState<StreamState>('connecting');
  const [needToken, setNeedToken] = useState<'no' | 'ask' | 'rejected'>('no');
  // Bumped when a token is given, to start the stream again with it.
  const [session, setSession] = useState(0);

  // A 401 after a token was given means that token is wrong.
  const tokenGiven = useRef(authHeaders().authorization !== undefined);
  const unauthorized = useCallback(() => setNeedToken(tokenGiven.current ? 'rejected' : 'ask'), []);

  const refresh = useCallback(() => {
    listHarnesses().then(
      (list) => {
        setHarnesses(list);
        setListError(undefined);
      },
      (e: unknown) => (isUnauthorized(e) ? unauthorized() : setListError(e)),
    );
  }, [unauthorized]);

  useEffect(
    () =>
      followChanges(
        (message: HarnessChange) => {
          setChange((c) => ({ seq: c.seq + 1, message }));
          refresh();
        },
        (state) => {
          setStream(state);
          if (state === 'unauthorized') unauthorized();
          // Listed once the stream is open: what changed before is in the list, what changes after arrives as an event.
          if (state === 'live') {
            setChange((c) => ({ seq: c.seq + 1, message: undefined }));
            refresh();
          }
        },
      ),
    [session],
  );

  const giveToken = (token: string) => {
    tokenGiven.current = true;
    setToken(token);
    setNeedToken('no');
    setSession((s) => s + 1);
  };

  return (
    <Page.Provider value={{ harnesses, change, unauthorized }}>
      <header class="top">
        <a class="brand" href={href({ view: 'list' })}>
          bermd
        </a>
        <nav aria-label="Main">
          <a href={href({ view: 'list' })} aria-current={route.view === 'list' ? 'page' : undefined}>
            Harnesses
          </a>
          <a href={href({ view: 'deploy' })} aria-current={route.view === 'deploy' ? 'page' : undefined}>
            Deploy
          </a>
        </nav>
        <span class={`stream ${stream}`} role="status" aria-label={`Updates: ${STATE_TEXT[stream]}`} data-stream={stream}>
          {STATE_TEXT[stream]}
        </span>
      </header>
      <main>
        {needToken !== 'no' ? (
          <TokenPrompt onToken={giveToken} rejected={needToken === 'rejected'} />
        ) : (
          <>
            {listError !== undefined ? <ErrorNote error={listError} /> : null}
            {route.view === 'list' ? <List /> : null}
            {route.view === 'harness' ? <Harness key={route.name} name={route.name} /> : null}
            {route.view === 'try' ? <Try key={`${route.name}/${route.tool}`} name={route.name} tool={route.tool} /> : null}
            {route.view === 'deploy' ? <Deploy key={route.name ?? ''} name={route.name} /> : null}
          </>
        )}
      </main>
    </Page.Provider>
  );
}
