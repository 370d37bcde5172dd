/**
 * @module Members (admins): invite (the invitation's link shown once; pending invitations listed with resend and
 * revoke), change a role, remove, and reset a member's password and/or two-step verification (a single-use reset
 * link shown once; the member's sessions end at once). The server enforces who may reset whom; the panel offers
 * the action where it can succeed (not on oneself, not on an owner unless the session is an owner's).
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { accountResetLink, invitationLink } from '../link-screens.tsx';
import { useSession } from '../session.ts';
import { BehindButton, CancelButton, ConfirmButton, ErrorNote, Field, SecretOnce, useLoad, when } from '../ui.tsx';
import { ROLES } from '../vocabulary.ts';
import { PendingInvitations } from './pending-invitations.tsx';

const RESETS: { value: Schemas['AccountResetKind']; label: string }[] = [
  { value: 'both', label: 'password and two-step' },
  { value: 'password', label: 'password' },
  { value: 'totp', label: 'two-step' },
];
const RESET_WORDS: Record<Schemas['AccountResetKind'], string> = {
  both: 'password and two-step verification',
  password: 'password',
  totp: 'two-step verification',
};

export function MembersScreen() {
  const list = useLoad(() => ok(api.GET('/workspace/members', {})), []);
  const { session } = useSession();
  const [invited, setInvited] = useState<Schemas['Invitation'] | undefined>(undefined);
  const [reset, setReset] = useState<Schemas['AccountReset'] | undefined>(undefined);
  const [resetKinds, setResetKinds] = useState<Record<string, Schemas['AccountResetKind']>>({});
  const mayReset = (m: Schemas['Member']) => m.userId !== session.userId && (m.role !== 'owner' || session.role === 'owner');
  const [error, setError] = useState<unknown>(undefined);
  /** Bumped after an invitation is made: the pending list reads again. */
  const [invitations, setInvitations] = useState(0);

  async function act(run: () => Promise<unknown>) {
    setError(undefined);
    try {
      await run();
      list.reload();
    } catch (err) {
      setError(err);
      // A refused role change (403 role_forbidden) must not leave the select showing a role the member does not have.
      list.reload();
    }
  }

  async function invite(event: Event, close: () => void) {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    await act(async () => {
      const invitation = await ok(
        api.POST('/workspace/invitations', {
          params: { header: csrfHeader() },
          body: { email: String(form.get('email')), role: String(form.get('role')) as Schemas['WorkspaceRole'] },
        }),
      );
      setInvited(invitation);
      setInvitations((n) => n + 1);
      close();
    });
  }

  const userParams = (userId: string) => ({ params: { path: { user_id: userId }, header: csrfHeader() } });
  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <ErrorNote error={error ?? list.error} />
      {invited ? (
        <SecretOnce label={`Invitation link for ${invited.email}`} secret={invitationLink(invited.token)} after="resend the invitation for a new link">
          <p class="muted">
            Send it to {invited.email} until {when(invited.expiresAt)}: they choose a password and set up two-step verification with a QR code (or confirm with
            their password if they already have an account here). It works once.
          </p>
          <button type="button" onClick={() => setInvited(undefined)}>
            Done
          </button>
        </SecretOnce>
      ) : null}
      {reset ? (
        <SecretOnce label={`Reset link for ${reset.email}`} secret={accountResetLink(reset.token)} after="reset again for a new link">
          <p class="muted">
            Their sessions have ended. Send it to {reset.email}: it works once, until {when(reset.expiresAt)}. They{' '}
            {reset.reset === 'totp' ? 'confirm with their current password' : 'choose a new password'}
            {reset.reset === 'password' ? '' : ' and set up two-step verification again with a QR code'}.
          </p>
          <button type="button" onClick={() => setReset(undefined)}>
            Done
          </button>
        </SecretOnce>
      ) : null}
      <BehindButton label="Invite someone" primary>
        {(close) => (
          <form class="card" onSubmit={(event) => invite(event, close)} aria-labelledby="invite-title">
            <h2 id="invite-title">Invite someone</h2>
            <Field label="Email">
              {/* biome-ignore lint/a11y/noAutofocus: the form opens because its button was pressed; its first field takes the focus. */}
              <input name="email" type="email" required autoFocus />
            </Field>
            <Field label="Role">
              <select name="role" value="member">
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </Field>
            <div class="row">
              <button type="submit" class="primary">
                Invite
              </button>
              <CancelButton onClick={close} />
            </div>
          </form>
        )}
      </BehindButton>
      <PendingInvitations refresh={invitations} onResent={setInvited} />
      <div class="row spread">
        <h2>Members</h2>
        <button
          type="button"
          onClick={() => {
            list.reload();
            setInvitations((n) => n + 1);
          }}
        >
          Refresh members
        </button>
      </div>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Members of the workspace</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Two-step verification</th>
              <th scope="col">Joined</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((m) => (
              <tr key={m.userId}>
                <td>{m.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    onChange={(e) =>
                      act(() =>
                        ok(
                          api.PATCH('/workspace/members/{user_id}', {
                            ...userParams(m.userId),
                            body: { role: e.currentTarget.value as Schemas['WorkspaceRole'] },
                          }),
                        ),
                      )
                    }
                  >
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                </td>
                <td>{m.twoFactorEnabled ? 'on' : 'off'}</td>
                <td>{when(m.joinedAt)}</td>
                <td class="actions">
                  {mayReset(m) ? (
                    <>
                      <select
                        aria-label={`What to reset for ${m.email}`}
                        value={resetKinds[m.userId] ?? 'both'}
                        onChange={(e) => setResetKinds({ ...resetKinds, [m.userId]: e.currentTarget.value as Schemas['AccountResetKind'] })}
                      >
                        {RESETS.map((r) => (
                          <option key={r.value} value={r.value}>
                            {r.label}
                          </option>
                        ))}
                      </select>
                      <ConfirmButton
                        label={`Reset password / two-step of ${m.email}`}
                        confirmLabel="Reset now"
                        question={`Reset the ${RESET_WORDS[resetKinds[m.userId] ?? 'both']} of ${m.email}? Their sessions end now; they get a single-use link.`}
                        onConfirm={() =>
                          act(async () => {
                            setReset(
                              await ok(
                                api.POST('/workspace/members/{user_id}/reset', { ...userParams(m.userId), body: { reset: resetKinds[m.userId] ?? 'both' } }),
                              ),
                            );
                          })
                        }
                      />
                    </>
                  ) : null}
                  <ConfirmButton
                    danger
                    label={`Remove ${m.email}`}
                    confirmLabel="Remove now"
                    question={`Remove ${m.email} from the workspace?`}
                    onConfirm={() => act(() => ok(api.DELETE('/workspace/members/{user_id}', userParams(m.userId))))}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
