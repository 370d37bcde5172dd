/**
 * @module The pending invitations of the Members screen (GET /workspace/invitations): who, which role, until when,
 * with resend (a new link; the old one stops working) and revoke, each confirmed. Only an owner resends or revokes an
 * owner's invitation; the panel offers both where they can succeed.
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { Badge, ConfirmButton, ErrorNote, useLoad, when } from '../ui.tsx';

export function PendingInvitations({ refresh, onResent }: { refresh: number; onResent(invitation: Schemas['Invitation']): void }) {
  const list = useLoad(() => ok(api.GET('/workspace/invitations', {})), [refresh]);
  const { session } = useSession();
  const [error, setError] = useState<unknown>(undefined);
  const mayManage = (i: Schemas['PendingInvitation']) => i.role !== 'owner' || session.role === 'owner';
  const params = (id: string) => ({ params: { path: { invitation_id: id }, header: csrfHeader() } });

  async function act(run: () => Promise<unknown>) {
    setError(undefined);
    try {
      await run();
    } catch (err) {
      setError(err);
    }
    list.reload();
  }

  const invitations = list.data?.data ?? [];
  return (
    <section aria-labelledby="pending-title">
      <h2 id="pending-title">Pending invitations</h2>
      <ErrorNote error={error ?? list.error} />
      {list.data && invitations.length === 0 ? <p class="muted">No pending invitations.</p> : null}
      {invitations.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Invitations not accepted yet</caption>
            <thead>
              <tr>
                <th scope="col">Invited</th>
                <th scope="col">Valid until</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <td>
                    {i.email}
                    <br />
                    <span class="muted">as {i.role}</span>
                  </td>
                  <td>{i.status === 'expired' ? <Badge tone="amber">expired {when(i.expiresAt)}</Badge> : when(i.expiresAt)}</td>
                  <td class="actions">
                    {mayManage(i) ? (
                      <>
                        <ConfirmButton
                          label={`Resend the invitation of ${i.email}`}
                          text="Resend"
                          confirmLabel="Resend now"
                          question={`Make a new link for ${i.email}, valid 7 days? The current link stops working.`}
                          onConfirm={() => act(async () => onResent(await ok(api.POST('/workspace/invitations/{invitation_id}/resend', params(i.id)))))}
                        />
                        <ConfirmButton
                          danger
                          label={`Revoke the invitation of ${i.email}`}
                          text="Revoke"
                          confirmLabel="Revoke now"
                          question={`Revoke the invitation of ${i.email}? Its link stops working.`}
                          onConfirm={() => act(() => ok(api.DELETE('/workspace/invitations/{invitation_id}', params(i.id))))}
                        />
                      </>
                    ) : (
                      <span class="muted">an owner's invitation</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
