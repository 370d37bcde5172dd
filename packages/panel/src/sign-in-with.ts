/**
 * @module Signing in from a link's page (an invitation, a reset): POST /auth/login with the password the person has
 * just set or confirmed and a code of their authenticator, then the workspace the link was for
 * (POST /auth/workspace) when the session started on another one of theirs, then the session as the panel keeps it
 * (GET /auth/session, as after any sign-in).
 */
import { ApiError, api, csrfHeader, ok, setCsrfToken } from './api.ts';
import { readSession, type Session } from './session.ts';

export async function signInWith(credentials: { email: string; password: string; totpCode: string }, workspaceId?: string): Promise<Session> {
  const login = await ok(api.POST('/auth/login', { body: credentials }));
  setCsrfToken(login.csrfToken);
  // The login starts on the user's oldest workspace; an invitation's is usually the newest.
  if (workspaceId && workspaceId !== login.workspaceId) {
    await ok(api.POST('/auth/workspace', { params: { header: csrfHeader() }, body: { workspaceId } }));
  }
  const session = await readSession();
  if (!session) {
    const words = 'Signed in, but this browser did not keep the session cookie: the panel needs HTTPS (or localhost).';
    throw new ApiError(0, 'cookie_dropped', words, undefined, undefined, {});
  }
  return session;
}
