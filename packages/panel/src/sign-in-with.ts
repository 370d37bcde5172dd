/**
 * @module Signing in from a link's page (an invitation, a reset): POST /auth/login with the password the person has
 * just set or confirmed and a code of their authenticator, then the workspace the link was for
 * (POST /auth/workspace) when the session started on another one of theirs.
 */
import { api, csrfHeader, ok, setCsrfToken } from './api.ts';
import type { Session } from './session.ts';

export async function signInWith(credentials: { email: string; password: string; totpCode: string }, workspaceId?: string): Promise<Session> {
  const body = await ok(api.POST('/auth/login', { body: credentials }));
  setCsrfToken(body.csrfToken);
  const session: Session = {
    userId: body.user.id,
    email: body.user.email,
    workspaceId: body.workspaceId,
    role: body.workspaces.find((w) => w.id === body.workspaceId)?.role ?? body.user.role,
    workspaces: body.workspaces,
    expiresAt: body.expiresAt,
  };
  // The login starts on the user's oldest workspace; an invitation's is usually the newest.
  if (!workspaceId || workspaceId === session.workspaceId) return session;
  const selected = await ok(api.POST('/auth/workspace', { params: { header: csrfHeader() }, body: { workspaceId } }));
  return { ...session, workspaceId: selected.workspaceId, role: selected.role, workspaces: selected.workspaces };
}
