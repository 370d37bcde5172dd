/**
 * @module Sign in: email, password and the six-digit TOTP code (POST /auth/login).
 */
import { useState } from 'preact/hooks';
import { ApiError, api, ok, setCsrfToken } from '../api.ts';
import type { Session } from '../session.ts';
import { ErrorNote, Field, waitText } from '../ui.tsx';

export function SignIn({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const body = await ok(
        api.POST('/auth/login', {
          body: { email: String(form.get('email')), password: String(form.get('password')), totpCode: String(form.get('totpCode')) },
        }),
      );
      setCsrfToken(body.csrfToken);
      onSignedIn({
        userId: body.user.id,
        email: body.user.email,
        workspaceId: body.workspaceId,
        role: roleIn(body),
        workspaces: body.workspaces,
        expiresAt: body.expiresAt,
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin" id="main">
      <h1>Sign in to the panel</h1>
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
    </main>
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

function roleIn(body: { workspaceId: string; workspaces: Session['workspaces']; user: { role: string } }): Session['role'] {
  return body.workspaces.find((w) => w.id === body.workspaceId)?.role ?? (body.user.role as Session['role']);
}
