/**
 * @module Sign in: email, password and the six-digit TOTP code (POST /auth/login), then the session read back
 * from the cookie (GET /auth/session), which proves the browser kept it; or with SSO, by the work address's domain. Says why the panel is here when a session
 * ended (expired, signed out elsewhere), and that the panel needs HTTPS (or localhost) where the browser would drop
 * the `Secure` session cookie.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, ok } from '../api.ts';
import { insecureContext, readSession, type Session } from '../session.ts';
import type { EndReason } from '../session-watch.ts';
import { ErrorNote, Field, waitText } from '../ui.tsx';

/** Why the sign-in screen is shown instead of the page asked for. */
export type SignInNotice = { kind: EndReason } | { kind: 'error'; error: unknown };

export function SignIn({ onSignedIn, notice }: { onSignedIn(session: Session): void; notice?: SignInNotice | undefined }) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  /** Signed in, yet the cookie did not come back: the browser dropped it (plain HTTP on another host than localhost). */
  const [cookieDropped, setCookieDropped] = useState(false);
  const [shown, setShown] = useState(notice);

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    setShown(undefined);
    setCookieDropped(false);
    try {
      await ok(
        api.POST('/auth/login', {
          body: { email: String(form.get('email')), password: String(form.get('password')), totpCode: String(form.get('totpCode')) },
        }),
      );
      const session = await readSession();
      if (session) onSignedIn(session);
      else setCookieDropped(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin" id="main">
      <h1>Sign in to the panel</h1>
      {insecureContext() || cookieDropped ? <NeedsHttps afterSignIn={cookieDropped} /> : null}
      {shown ? <Notice notice={shown} /> : null}
      <form onSubmit={submit} aria-describedby="signin-help">
        <p id="signin-help" class="muted">
          Use your email, your password and the six-digit code of your authenticator app.
        </p>
        <Field label="Email">
          <input name="email" type="email" autoComplete="username" required />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required />
        </Field>
        <Field label="Six-digit code">
          <input
            name="totpCode"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            title="The six digits of your authenticator app"
          />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <SignInError error={error} />
      </form>
      <SingleSignOn />
    </main>
  );
}

/**
 * Sign in with SSO: the work address's domain names the workspace whose identity provider signs the person in
 * (`POST /auth/sso/start`); the browser goes there and comes back to `/panel/sso/callback`.
 */
function SingleSignOn() {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  async function start(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const { authorizationUrl } = await ok(api.POST('/auth/sso/start', { body: { email: String(form.get('ssoEmail')) } }));
      window.location.assign(authorizationUrl);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <section class="sso" aria-labelledby="sso-title">
      <h2 id="sso-title">Sign in with SSO</h2>
      <form onSubmit={start} aria-describedby="sso-help">
        <p id="sso-help" class="muted">
          If your workspace signs you in with its identity provider, give your work address: its domain finds the workspace.
        </p>
        <Field label="Work address">
          <input name="ssoEmail" type="email" autoComplete="username" required />
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Opening your identity provider…' : 'Continue with your identity provider'}
        </button>
        {error instanceof ApiError && error.code === 'not_found' ? (
          <div class="error" role="alert">
            <strong>No workspace signs in addresses of this domain with SSO.</strong> Sign in with your password above, or ask your workspace&apos;s owner.
          </div>
        ) : (
          <ErrorNote error={error} />
        )}
      </form>
    </section>
  );
}

/** The session ended, or could not be read: said once, in words, until the next attempt. */
function Notice({ notice }: { notice: SignInNotice }) {
  if (notice.kind === 'error') return <ErrorNote error={notice.error} />;
  return (
    <div class="notice" role="alert">
      {notice.kind === 'expired' ? (
        <>
          <strong>Your session expired.</strong> A session lasts 12 hours. Sign in again to go on where you were.
        </>
      ) : (
        <>
          <strong>You were signed out.</strong> The session ended elsewhere: signed out in another tab or browser, or ended by a password or two-step reset.
          Sign in again to go on where you were.
        </>
      )}
    </div>
  );
}

/**
 * The session cookie is `Secure`: a browser keeps it over HTTPS, or over plain HTTP on localhost only. Anywhere
 * else signing in would seem to work and every call after it would fail.
 */
function NeedsHttps({ afterSignIn }: { afterSignIn: boolean }) {
  return (
    <section class="error" role="alert" aria-labelledby="needs-https">
      <h2 id="needs-https">The panel needs HTTPS (or localhost)</h2>
      <p>
        {afterSignIn ? 'Your sign-in was accepted, but the browser did not keep the session cookie. ' : null}
        This page was opened over plain HTTP at <code>{window.location.host}</code>. The session cookie is <code>Secure</code>: browsers send it only over
        HTTPS, or over HTTP to localhost, so the panel cannot stay signed in here. Serve the service over HTTPS (<code>TLS_CERT</code> and <code>TLS_KEY</code>,
        or an HTTPS proxy in front) and open the panel with <code>https://</code>, or, on the service&apos;s own machine, at <code>http://localhost</code>{' '}
        instead.
      </p>
    </section>
  );
}

/** Login answers 401 without saying which part was wrong; the words name the usual culprit, the code. */
function SignInError({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.code === 'not_authenticated')
    return (
      <div class="error" role="alert">
        <strong>Sign-in failed: the email, the password or the six-digit code is wrong.</strong> Codes change every 30 seconds and each is accepted once: wait
        for a new code and try again.
        {error.requestId ? (
          <small>
            {' '}
            · request id <code>{error.requestId}</code>
          </small>
        ) : null}
      </div>
    );
  if (error instanceof ApiError && error.code === 'too_many_attempts')
    return (
      <div class="error" role="alert">
        <strong>Too many failed attempts.</strong> Wait {waitText(error.retryAfterSec ?? 60)} before signing in again.
        {error.requestId ? (
          <small>
            {' '}
            · request id <code>{error.requestId}</code>
          </small>
        ) : null}
      </div>
    );
  return <ErrorNote error={error} />;
}
