/**
 * @module The frame of a page opened from a link (an invitation, a reset) without a session, and the pair of fields
 * that choose a new password.
 */
import type { ComponentChildren } from 'preact';
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
