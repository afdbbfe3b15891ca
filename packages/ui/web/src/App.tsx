/** The page: a header saying who is signed in, the view the URL names, the deployed set kept current from `/events`. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { followChanges, type StreamState } from './changes.js';
import { listHarnesses, isUnauthorized } from './api.js';
import { Page, type PageState } from './context.js';
import type { Returned } from './oauth.js';
import type { Principal } from './principal.js';
import { href, type Route, useRoute } from './router.js';
import { type SignInControls, useSignIn } from './signin.js';
import type { HarnessChange, HarnessSummary } from './types.js';
import { ErrorNote } from './widgets.js';
import { Deploy } from './views/Deploy.js';
import { Harness } from './views/Harness.js';
import { List } from './views/List.js';
import { SignInView } from './views/SignIn.js';
import { Try } from './views/Try.js';

const STATE_TEXT: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  offline: 'Reconnecting…',
  unauthorized: 'Signed out',
};

export function App({ returned }: { returned: Returned | undefined }) {
  const route = useRoute();
  const controls = useSignIn(returned);
  const { signIn } = controls;
  if (signIn.state === 'in') return <SignedIn key={controls.generation} route={route} principal={signIn.principal} controls={controls} />;
  return (
    <>
      <Header route={route} />
      <main>
        {signIn.state === 'checking' ? <p class="muted">Connecting…</p> : null}
        {signIn.state === 'redirecting' ? <p class="muted">Signing in…</p> : null}
        {signIn.state === 'error' ? <ErrorNote error={signIn.error} /> : null}
        {signIn.state === 'out' ? <SignInView out={signIn} controls={controls} /> : null}
      </main>
    </>
  );
}

function Header({ route, stream, who }: { route: Route; stream?: StreamState; who?: { principal: Principal; signOut(): void } }) {
  return (
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
      <div class="end">
        {stream !== undefined ? (
          <span class={`stream ${stream}`} role="status" aria-label={`Updates: ${STATE_TEXT[stream]}`} data-stream={stream}>
            {STATE_TEXT[stream]}
          </span>
        ) : null}
        {who !== undefined ? (
          <span class="who">
            <span>
              Signed in as <strong data-principal>{who.principal.name}</strong>
            </span>
            <button type="button" class="secondary small" onClick={who.signOut}>
              Sign out
            </button>
          </span>
        ) : null}
      </div>
    </header>
  );
}

function SignedIn({ route, principal, controls }: { route: Route; principal: Principal; controls: SignInControls }) {
  const [harnesses, setHarnesses] = useState<HarnessSummary[] | undefined>(undefined);
  const [listError, setListError] = useState<unknown>(undefined);
  const [change, setChange] = useState<PageState['change']>({ seq: 0, message: undefined });
  const [stream, setStream] = useState<StreamState>('connecting');
  const { unauthorized } = controls;
  const reads = principal.mayRead();

  const refresh = useCallback(() => {
    listHarnesses().then(
      (list) => {
        setHarnesses(list);
        setListError(undefined);
      },
      (e: unknown) => (isUnauthorized(e) ? unauthorized() : setListError(e)),
    );
  }, [unauthorized]);

  // Without berm:read there is no list to follow: `/events` would refuse it.
  useEffect(() => {
    if (!reads) return undefined;
    return followChanges(
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
    );
  }, []);

  const who = controls.signIn.state === 'in' && controls.signIn.via !== undefined ? { principal, signOut: controls.signOut } : undefined;
  return (
    <Page.Provider value={{ principal, harnesses, change, unauthorized }}>
      <Header route={route} stream={reads ? stream : undefined} who={who} />
      <main>
        {listError !== undefined ? <ErrorNote error={listError} /> : null}
        {route.view === 'list' ? <List /> : null}
        {route.view === 'harness' ? reads ? <Harness key={route.name} name={route.name} /> : <List /> : null}
        {route.view === 'try' ? <Try key={`${route.name}/${route.tool}`} name={route.name} tool={route.tool} /> : null}
        {route.view === 'deploy' ? <Deploy key={route.name ?? ''} name={route.name} /> : null}
      </main>
    </Page.Provider>
  );
}
