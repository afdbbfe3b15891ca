/** Asks for the token of a bermd started with `--token-file`; it is sent as a header, never a cookie. */
import { useState } from 'preact/hooks';

export function TokenPrompt({ onToken, rejected }: { onToken(token: string): void; rejected: boolean }) {
  const [token, setToken] = useState('');
  return (
    <section aria-labelledby="token-heading" class="token">
      <h1 id="token-heading">This bermd asks for a token</h1>
      <p>
        It was started with <code>--token-file</code>. Give the token in that file; this tab keeps it until it closes and sends it as an{' '}
        <code>Authorization</code> header.
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
    </section>
  );
}
