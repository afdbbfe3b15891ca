/**
 * Signing in: through the authorization server bermd names (`--oauth-issuer`), when the operator gave the
 * page a client (`--oauth-page-client`); or with a static token (`--token-file`, `--access`), sent as a
 * header, never a cookie.
 */
import { useState } from 'preact/hooks';
import type { SignIn, SignInControls } from '../signin.js';
import { ErrorNote } from '../widgets.js';

export function SignInView({ out, controls }: { out: Extract<SignIn, { state: 'out' }>; controls: SignInControls }) {
  const { offer, offerError, rejected, error } = out;
  return (
    <section aria-labelledby="sign-in-heading" class="token">
      <h1 id="sign-in-heading">{offer !== undefined ? 'Sign in to this bermd' : 'This bermd asks for a token'}</h1>
      {error !== undefined ? <ErrorNote error={error} /> : null}
      {offerError !== undefined ? <ErrorNote error={offerError} /> : null}
      {offer === undefined ? null : offer.clientId !== undefined ? (
        <>
          <p>
            It accepts access tokens from <code>{offer.issuer}</code>. Signing in there brings you back here; the token is kept in this
            page's memory only, and a reload signs in again.
          </p>
          <div class="actions">
            <button type="button" onClick={() => controls.signInWithServer(offer)}>
              Sign in with {new URL(offer.issuer).host}
            </button>
          </div>
        </>
      ) : (
        <div class="note warn" role="status">
          It accepts access tokens from <code>{offer.issuer}</code>, but bermd was started without <code>--oauth-page-client</code>, so this
          page cannot sign in there. Give a token below, or restart bermd with <code>--oauth-page-client ID</code>: a public client of that
          server whose redirect URI is <code>{`${location.origin}${location.pathname}`}</code>.
        </div>
      )}
      {offer !== undefined ? (
        <details open={rejected}>
          <summary>Sign in with a token instead</summary>
          <TokenForm rejected={rejected === true} onToken={controls.giveToken} />
        </details>
      ) : (
        <TokenForm rejected={rejected === true} onToken={controls.giveToken} />
      )}
    </section>
  );
}

function TokenForm({ onToken, rejected }: { onToken(token: string): void; rejected: boolean }) {
  const [token, setToken] = useState('');
  return (
    <>
      <p>
        Started with <code>--token-file</code> or <code>--access</code>, it takes the token you were given; this tab keeps it until it
        closes or you sign out, and sends it as an <code>Authorization</code> header.
      </p>
      {rejected ? (
        <div class="note error" role="alert">
          bermd did not accept that token.
        </div>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim() !== '') onToken(token.trim());
        }}
      >
        <div class="field">
          <label for="token">Token</label>
          <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit">Use this token</button>
        </div>
      </form>
    </>
  );
}
