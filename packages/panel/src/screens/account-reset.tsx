/**
 * @module A reset link, `/panel/account-resets/<token>`, opened by the person whose password and/or two-step
 * verification an admin reset (no session needed): what it renews (POST /account-resets/preview), then a new password,
 * or the current one for a two-step reset (POST /account-resets/redeem); a new two-step secret is set up with a QR
 * code and takes effect when its first code is confirmed (the same request with `totpCode`), and the person signs in. A link that can no longer be used says so.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, ok, type Schemas } from '../api.ts';
import { FinishSignIn } from '../finish-sign-in.tsx';
import type { Session } from '../session.ts';
import { ErrorNote, Field, useLoad, when } from '../ui.tsx';
import { LinkPage, MIN_PASSWORD, NewPassword, usePasswordSubmit } from './link-page.tsx';

/** The first answer: the renewed account (a password reset), or the new two-step secret to confirm. */
type Redeemed = (Schemas['AccountResetRedeemed'] | Schemas['TwoStepSetup']) & { password: string };

const TITLES: Record<Schemas['AccountResetKind'], string> = {
  password: 'Choose a new password',
  totp: 'Set up two-step verification again',
  both: 'Choose a new password and set up two-step verification',
};

const ENDED =
  'This reset link can no longer be used: it has expired (links are valid 24 hours), a newer one replaced it, or it was already used. Ask an admin of your workspace for a new one.';

export function AccountResetScreen({ token, onSignedIn }: { token: string; onSignedIn(session: Session): void }) {
  const preview = useLoad(() => ok(api.POST('/account-resets/preview', { body: { token } })), [token]);
  const [redeemed, setRedeemed] = useState<Redeemed | undefined>(undefined);
  if (preview.loading && !preview.data) return <LinkPage title="Reset link">Reading the reset link…</LinkPage>;
  if (preview.error) return <LinkPage title="This reset link cannot be used">{endedWords(preview.error)}</LinkPage>;
  const reset = preview.data!;
  return (
    <LinkPage title={TITLES[reset.reset]}>
      <p>
        For <strong>{reset.email}</strong>. The link is valid until {when(reset.expiresAt)}; your earlier sessions have ended.
      </p>
      {redeemed && 'reset' in redeemed ? (
        <FinishSignIn email={redeemed.email} password={redeemed.password} totpSecret={null} onSignedIn={onSignedIn} />
      ) : redeemed ? (
        // The new secret replaces the old one once its first code is confirmed; until then the old one still signs in.
        <FinishSignIn
          email={redeemed.email}
          password={redeemed.password}
          totpSecret={redeemed.totpSecret}
          confirm={(totpCode) => ok(api.POST('/account-resets/redeem', { body: { token, password: redeemed.password, totpCode } }))}
          onSignedIn={onSignedIn}
        />
      ) : (
        <RedeemForm token={token} reset={reset} onRedeemed={setRedeemed} />
      )}
    </LinkPage>
  );
}

function RedeemForm(props: { token: string; reset: Schemas['AccountResetPreview']; onRedeemed(redeemed: Redeemed): void }) {
  const keepsPassword = props.reset.reset === 'totp';
  const { error, busy, submit } = usePasswordSubmit(
    (password) => ok(api.POST('/account-resets/redeem', { body: { token: props.token, password } })),
    props.onRedeemed,
  );

  return (
    <form onSubmit={submit} aria-labelledby="redeem-title">
      <h2 id="redeem-title">{keepsPassword ? 'Confirm with your password' : 'Your new password'}</h2>
      {keepsPassword ? (
        <>
          <p class="muted">Your password stays as it is; confirm it, then set up your authenticator app with a new secret.</p>
          <Field label="Your current password">
            <input name="password" type="password" autoComplete="current-password" required minLength={MIN_PASSWORD} />
          </Field>
        </>
      ) : (
        <NewPassword email={props.reset.email} />
      )}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : keepsPassword ? 'Continue' : 'Save the new password'}
      </button>
      {error instanceof ApiError && error.code === 'not_authenticated' ? (
        <div class="error" role="alert">
          <strong>The password is wrong.</strong> After 5 wrong passwords the link stops working.
        </div>
      ) : (
        <ErrorNote
          error={error instanceof ApiError && error.code === 'expired' ? new ApiError(410, 'expired', ENDED, error.requestId, undefined, {}) : error}
        />
      )}
    </form>
  );
}

function endedWords(error: unknown) {
  if (error instanceof ApiError && error.code === 'expired') return <p role="alert">{ENDED}</p>;
  // A token the server never issued, or a link cut short (the token no longer has its form).
  if (error instanceof ApiError && (error.code === 'not_found' || error.code === 'invalid_body')) {
    return <p role="alert">This reset link is not valid. Check that you opened the whole link you were sent.</p>;
  }
  return <ErrorNote error={error} />;
}
