/**
 * @module The signed-in session as the panel knows it: who, which workspace, which role, until when. Nothing of it
 * is stored in the browser: the cookie is HttpOnly, and after a reload, in a new tab or on a deep link the panel
 * reads the session again from the server (`GET /auth/session`), CSRF token included (kept in memory, api.ts).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, api, type Schemas, setCsrfToken, toApiError } from './api.ts';

export interface Session {
  userId: string;
  email: string;
  workspaceId: string;
  role: Schemas['WorkspaceRole'];
  workspaces: Schemas['UserWorkspaces'];
  expiresAt: string;
  /**
   * When the session ends by this browser's clock (ms since the epoch): `expiresAt` less the server's time of the
   * answer, added to the browser's, so that a browser whose clock is off still ends it on time.
   */
  endsAt: number;
}

export interface SessionContext {
  session: Session;
  /** Replaces the session (after a workspace switch) or ends it (undefined). */
  setSession(next: Session | undefined): void;
}

export const SessionCtx = createContext<SessionContext | undefined>(undefined);

export function useSession(): SessionContext {
  const ctx = useContext(SessionCtx);
  if (!ctx) throw new Error('useSession outside a signed-in panel');
  return ctx;
}

/** Owners and admins manage keys, webhooks, approvals, members and agents; members read. */
export function isAdmin(session: Session): boolean {
  return session.role === 'owner' || session.role === 'admin';
}

/**
 * The session of the cookie (`GET /auth/session`), its CSRF token now in memory; `undefined` when there is none
 * (`401`: never signed in, expired, signed out elsewhere, or a cookie the browser did not keep).
 * @throws ApiError when the server cannot answer (unreachable, 5xx)
 */
export async function readSession(): Promise<Session | undefined> {
  let answer: Awaited<ReturnType<typeof getSession>>;
  try {
    answer = await getSession();
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check the connection and try again.', undefined, undefined, {});
  }
  const { data, error, response } = answer;
  if (response.status === 401) return undefined;
  if (!data) throw toApiError(response, error);
  setCsrfToken(data.csrfToken);
  const serverNow = Date.parse(response.headers.get('Date') ?? '');
  const left = Date.parse(data.expiresAt) - (Number.isNaN(serverNow) ? Date.now() : serverNow);
  return {
    userId: data.user.id,
    email: data.user.email,
    workspaceId: data.workspaceId,
    role: data.user.role,
    workspaces: data.workspaces,
    expiresAt: data.expiresAt,
    endsAt: Date.now() + left,
  };
}

function getSession() {
  return api.GET('/auth/session', {});
}

/** The browser keeps a `Secure` cookie only in a secure context: HTTPS, or localhost over plain HTTP. */
export function insecureContext(): boolean {
  return window.isSecureContext === false;
}
