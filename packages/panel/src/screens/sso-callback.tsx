/**
 * @module The page the identity provider sends the browser back to (`/panel/sso/callback`, the redirect URI): the
 * parameters it returned go to `POST /auth/sso/callback`, which checks them against this browser's sign-in (the
 * `service_sso` cookie) and opens the session. A refusal is said in words (an email not verified or of another domain,
 * the provider's error, a sign-in started elsewhere or expired), with the way back to the sign-in page.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api.ts';
import { navigate } from '../router.ts';
import { readSession, type Session } from '../session.ts';
import { ErrorNote } from '../ui.tsx';

export function SsoCallbackScreen({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    const query = new URLSearchParams(window.location.search);
    const text = (name: string) => query.get(name) ?? undefined;
    const body = {
      state: text('state') ?? '',
      ...(text('code') ? { code: text('code') } : {}),
      ...(text('iss') ? { iss: text('iss') } : {}),
      ...(text('error') ? { error: text('error') } : {}),
    };
    // The code is used once; it leaves the address bar (and the history) at once.
    window.history.replaceState(null, '', window.location.pathname);
    ok(api.POST('/auth/sso/callback', { body }))
      .then(() => readSession())
      .then((session) => {
        if (!session) throw new Error('The session cookie was not kept.');
        onSignedIn(session);
      })
      .catch((err: unknown) => setError(err));
  }, []);

  return (
    <main class="signin" id="main" aria-busy={error ? undefined : 'true'}>
      <h1>Single sign-on</h1>
      {error ? (
        <>
          <p>The single sign-on did not sign you in, and no session was opened.</p>
          <ErrorNote error={error} />
          <p>
            <a
              href="/panel"
              onClick={(e) => {
                e.preventDefault();
                navigate('');
                window.location.reload();
              }}
            >
              Back to sign-in
            </a>
          </p>
        </>
      ) : (
        <p role="status">Signing you in…</p>
      )}
    </main>
  );
}
