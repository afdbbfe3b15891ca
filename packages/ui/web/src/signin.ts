/**
 * Whether the page is signed in, and as whom: `GET /whoami` with what the page holds. A 401 says how
 * this bermd signs in: a static token (`--token-file`, `--access`) always, and its authorization server
 * too when the challenge carries `resource_metadata` (`--oauth-issuer`).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, isUnauthorized, whoami } from './api.js';
import { type CredentialKind, credentialKind, forgetCredentials, holdAccessToken, holdStaticToken } from './credentials.js';
import { mcp } from './mcp.js';
import { type OAuthOffer, offerOf, resourceMetadataOf, type Returned, startSignIn } from './oauth.js';
import { Principal } from './principal.js';

export type SignIn =
  | { state: 'checking' }
  /** `via`: how, or undefined where bermd asks for no token. */
  | { state: 'in'; principal: Principal; via: CredentialKind | undefined }
  | {
      state: 'out';
      /** How to sign in through the authorization server, when bermd has one. */
      offer?: OAuthOffer;
      /** Why that could not be read. */
      offerError?: unknown;
      /** A static token given was refused. */
      rejected?: boolean;
      /** What went wrong with the last sign-in, if anything. */
      error?: unknown;
    }
  | { state: 'redirecting' }
  /** bermd could not be asked. */
  | { state: 'error'; error: unknown };

export interface SignInControls {
  signIn: SignIn;
  /** Bumped at each sign-in and sign-out, for what follows bermd on the principal's behalf to start again. */
  generation: number;
  giveToken(token: string): void;
  signInWithServer(offer: OAuthOffer): void;
  signOut(): void;
  /** A request was answered 401: the token expired or was withdrawn. */
  unauthorized(): void;
}

export function useSignIn(returned: Returned | undefined): SignInControls {
  const [signIn, setSignIn] = useState<SignIn>({ state: 'checking' });
  const [generation, setGeneration] = useState(0);
  // Whether bermd accepted what the page holds: a later 401 means it expired, where a first one means it is wrong.
  const accepted = useRef(false);
  const checking = useRef<Promise<void> | undefined>(undefined);

  const redirect = useCallback(async (offer: OAuthOffer) => {
    setSignIn({ state: 'redirecting' });
    try {
      await startSignIn(offer);
    } catch (error) {
      setSignIn({ state: 'out', offer, error });
    }
  }, []);

  const check = useCallback((lastError?: unknown): Promise<void> => {
    const run = async () => {
      try {
        const who = await whoami();
        accepted.current = true;
        setSignIn({ state: 'in', principal: new Principal(who.name, who.scopes), via: credentialKind() });
        setGeneration((g) => g + 1);
        return;
      } catch (e) {
        if (!isUnauthorized(e)) {
          setSignIn({ state: 'error', error: e });
          return;
        }
        const held = credentialKind();
        const expired = held === 'oauth' && accepted.current;
        forgetCredentials();
        mcp.forget();
        accepted.current = false;
        setGeneration((g) => g + 1);
        const found = resourceMetadataOf((e as ApiError).challenge);
        let offer: OAuthOffer | undefined;
        let offerError: unknown;
        if (found !== undefined) {
          try {
            offer = await offerOf(found);
          } catch (x) {
            offerError = x;
          }
        }
        // An access token that worked and now does not has expired: sign in again, which the
        // authorization server's own sign-in usually lets through without a form.
        if (expired && offer?.clientId !== undefined) return redirect(offer);
        setSignIn({ state: 'out', offer, offerError, rejected: held === 'token', error: lastError ?? (held === 'oauth' ? e : undefined) });
      }
    };
    // One check at a time: several requests answered 401 at once are one expiry.
    checking.current ??= run().finally(() => {
      checking.current = undefined;
    });
    return checking.current;
  }, []);

  useEffect(() => {
    if (returned !== undefined && 'token' in returned) holdAccessToken(returned.token);
    void check(returned !== undefined && 'error' in returned ? returned.error : undefined);
  }, []);

  return {
    signIn,
    generation,
    giveToken: (token) => {
      holdStaticToken(token);
      void check();
    },
    signInWithServer: (offer) => void redirect(offer),
    signOut: () => {
      forgetCredentials();
      mcp.forget();
      accepted.current = false;
      void check();
    },
    unauthorized: () => void check(),
  };
}
