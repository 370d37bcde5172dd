/**
 * @module An invitation link, `/panel/invitations/<token>`, opened by the person invited (no session needed): what it
 * offers (POST /invitations/preview), then a new password and two-step verification set up with a QR code (the
 * account is made when its first code is confirmed: POST /invitations/accept twice), or the password of the account
 * the email already has (POST /invitations/accept), and a sign-in into the workspace. A link
 * that can no longer be used says why (revoked, replaced, expired, already used).
 */
import { useState } from 'preact/hooks';
import { ApiError, api, ok, type Schemas } from '../api.ts';
import { FinishSignIn } from '../finish-sign-in.tsx';
import type { Session } from '../session.ts';
import { ErrorNote, Field, useLoad, when } from '../ui.tsx';
import { LinkPage, NewPassword, usePasswordSubmit } from './link-page.tsx';

/** The first answer: the membership (an existing account), or a new account's two-step secret to confirm. */
type Accepted = (Schemas['InvitationAccepted'] | Schemas['TwoStepSetup']) & { password: string };

const ENDED: Record<Schemas['InvitationExpiredError']['reason'], string> = {
  revoked: 'This invitation was revoked by an admin of the workspace. Ask them for a new one if you still need access.',
  replaced: 'A newer invitation was sent to you: use the link of the latest one.',
  expired: 'This invitation has expired (invitations are valid for 7 days). Ask an admin of the workspace to send it again.',
  used: 'This invitation was already accepted. Sign in with your email, password and authenticator app.',
};

export function InvitationScreen({ token, onSignedIn }: { token: string; onSignedIn(session: Session): void }) {
  const preview = useLoad(() => ok(api.POST('/invitations/preview', { body: { token } })), [token]);
  const [accepted, setAccepted] = useState<Accepted | undefined>(undefined);
  if (preview.loading && !preview.data) return <LinkPage title="Invitation">Reading the invitation…</LinkPage>;
  if (preview.error) return <LinkPage title="This invitation cannot be used">{endedWords(preview.error)}</LinkPage>;
  const invitation = preview.data!;
  return (
    <LinkPage title={`Join ${invitation.workspaceName}`}>
      <p>
        <strong>{invitation.email}</strong> is invited to join <strong>{invitation.workspaceName}</strong> as <strong>{invitation.role}</strong>. The invitation
        is valid until {when(invitation.expiresAt)}.
      </p>
      {accepted && 'workspaceId' in accepted ? (
        <FinishSignIn email={accepted.email} password={accepted.password} totpSecret={null} workspaceId={accepted.workspaceId} onSignedIn={onSignedIn} />
      ) : accepted ? (
        // A new account exists once its first code is confirmed; it belongs to this workspace only, where it signs in.
        <FinishSignIn
          email={accepted.email}
          password={accepted.password}
          totpSecret={accepted.totpSecret}
          confirm={(totpCode) => ok(api.POST('/invitations/accept', { body: { token, password: accepted.password, totpCode } }))}
          onSignedIn={onSignedIn}
        />
      ) : (
        <AcceptForm token={token} invitation={invitation} onAccepted={setAccepted} />
      )}
    </LinkPage>
  );
}

function AcceptForm(props: { token: string; invitation: Schemas['InvitationPreview']; onAccepted(accepted: Accepted): void }) {
  const { hasAccount } = props.invitation;
  const { error, busy, submit } = usePasswordSubmit(
    (password) => ok(api.POST('/invitations/accept', { body: { token: props.token, password } })),
    props.onAccepted,
  );

  return (
    <form onSubmit={submit} aria-labelledby="accept-title">
      <h2 id="accept-title">{hasAccount ? 'Confirm with your password' : 'Choose a password'}</h2>
      {hasAccount ? (
        <>
          <p class="muted">{props.invitation.email} already has an account here: confirm with its password to add this workspace to it.</p>
          <Field label="Your password">
            <input name="password" type="password" autoComplete="current-password" required minLength={12} />
          </Field>
        </>
      ) : (
        <>
          <p class="muted">Then you set up two-step verification with an authenticator app: every sign-in asks for its six-digit code.</p>
          <NewPassword email={props.invitation.email} />
        </>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Accepting…' : hasAccount ? 'Accept the invitation' : 'Accept and set up two-step verification'}
      </button>
      {error instanceof ApiError && error.code === 'not_authenticated' ? (
        <div class="error" role="alert">
          <strong>The password is wrong.</strong> Use the password of your account for {props.invitation.email}.
        </div>
      ) : (
        <ErrorNote error={endedError(error)} />
      )}
    </form>
  );
}

/** Why the link cannot be used, in words; any other error as it came. */
function endedWords(error: unknown) {
  if (error instanceof ApiError && error.code === 'expired') {
    const reason = error.body.reason as keyof typeof ENDED | undefined;
    return <p role="alert">{ENDED[reason ?? 'expired'] ?? ENDED.expired}</p>;
  }
  // A token the server never issued, or a link cut short (the token no longer has its form).
  if (error instanceof ApiError && (error.code === 'not_found' || error.code === 'invalid_body')) {
    return <p role="alert">This invitation link is not valid. Check that you opened the whole link you were sent.</p>;
  }
  return <ErrorNote error={error} />;
}

/** A link that ended while the form was open (revoked meanwhile) is said the same way. */
function endedError(error: unknown): unknown {
  if (error instanceof ApiError && error.code === 'expired') {
    const reason = error.body.reason as keyof typeof ENDED | undefined;
    return new ApiError(error.status, error.code, ENDED[reason ?? 'expired'] ?? error.message, error.requestId, undefined, error.body);
  }
  return error;
}
