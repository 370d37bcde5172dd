/**
 * @module The frame of a page opened from a link (an invitation, a reset) without a session, and the pair of fields
 * that choose a new password.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Field } from '../ui.tsx';

/** At least what the server asks (AcceptInvitationRequest, RedeemAccountResetRequest). */
export const MIN_PASSWORD = 12;

export function LinkPage({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main class="signin link-page" id="main">
      <h1>{title}</h1>
      {children}
      <p class="muted">
        <a href="/panel">Go to the sign-in page</a>
      </p>
    </main>
  );
}

/** The account's email (read-only, for password managers), a new password and the same again. */
export function NewPassword({ email }: { email: string }) {
  return (
    <>
      <Field label="Email">
        <input name="email" type="email" autoComplete="username" readOnly value={email} />
      </Field>
      <Field label="New password" hint={`At least ${MIN_PASSWORD} characters`}>
        <input name="password" type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} maxLength={256} />
      </Field>
      <Field label="Repeat the new password">
        <input
          name="repeat"
          type="password"
          autoComplete="new-password"
          required
          onInput={(e) => {
            const repeat = e.currentTarget;
            const password = repeat.form?.elements.namedItem('password') as HTMLInputElement | null;
            repeat.setCustomValidity(password && password.value !== repeat.value ? 'The two passwords differ.' : '');
          }}
        />
      </Field>
    </>
  );
}

/**
 * A link page's password form: `send` with the typed password while busy, its error kept to show, its answer (with
 * the password, which the sign-in that follows needs) handed to `done`.
 */
export function usePasswordSubmit<T>(send: (password: string) => Promise<T>, done: (answer: T & { password: string }) => void) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    const password = String(new FormData(event.currentTarget as HTMLFormElement).get('password'));
    setBusy(true);
    setError(undefined);
    try {
      done({ ...(await send(password)), password });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return { error, busy, submit };
}
