/**
 * @module The pages a link opens, with or without a session: `/panel/invitations/<token>`,
 * `/panel/account-resets/<token>`, and `/panel/sso/callback` where the identity provider sends the browser back. The
 * token stays in the page: it goes to the API in request bodies only.
 */
import { AccountResetScreen } from './screens/account-reset.tsx';
import { InvitationScreen } from './screens/invitation.tsx';
import { SsoCallbackScreen } from './screens/sso-callback.tsx';
import type { Session } from './session.ts';

/** The panel's link of an invitation token, on this server's origin. */
export function invitationLink(token: string): string {
  return `${window.location.origin}/panel/invitations/${token}`;
}

/** The panel's link of a reset token, on this server's origin. */
export function accountResetLink(token: string): string {
  return `${window.location.origin}/panel/account-resets/${token}`;
}

/** The page of the route when it is a link's, else undefined. */
export function linkScreen(route: string, onSignedIn: (session: Session) => void) {
  if (route === '/sso/callback') return <SsoCallbackScreen onSignedIn={onSignedIn} />;
  const [, kind, token] = /^\/(invitations|account-resets)\/([^/]+)$/.exec(route) ?? [];
  if (!kind || !token) return undefined;
  const decoded = decodeURIComponent(token);
  return kind === 'invitations' ? (
    <InvitationScreen key={decoded} token={decoded} onSignedIn={onSignedIn} />
  ) : (
    <AccountResetScreen key={decoded} token={decoded} onSignedIn={onSignedIn} />
  );
}
