/**
 * @module Members (admins): invite (the invitation token shown once), change a role, remove.
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { ConfirmButton, ErrorNote, Field, SecretOnce, useLoad, when } from '../ui.tsx';

const ROLES: Schemas['WorkspaceRole'][] = ['owner', 'admin', 'member'];

export function MembersScreen() {
  const list = useLoad(() => ok(api.GET('/workspace/members', {})), []);
  const [invited, setInvited] = useState<Schemas['Invitation'] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

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

  async function invite(event: Event) {
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
      formEl.reset();
    });
  }

  const userParams = (userId: string) => ({ params: { path: { user_id: userId }, header: csrfHeader() } });
  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <ErrorNote error={error ?? list.error} />
      {invited ? (
        <SecretOnce label={`Invitation token for ${invited.email}`} secret={invited.token}>
          <p class="muted">
            Send it to {invited.email}; it is accepted with <code>POST /invitations/accept</code> until {when(invited.expiresAt)}.
          </p>
          <button type="button" onClick={() => setInvited(undefined)}>
            Done
          </button>
        </SecretOnce>
      ) : null}
      <form class="card" onSubmit={invite} aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <Field label="Email">
          <input name="email" type="email" required />
        </Field>
        <Field label="Role">
          <select name="role" value="member">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
        <button type="submit" class="primary">
          Invite
        </button>
      </form>
      <div class="row spread">
        <h2>Members</h2>
        <button type="button" onClick={list.reload}>
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
