/**
 * @module The signed-in session as the panel knows it: who, which workspace, which role. Nothing of it is
 * stored in the browser; the cookie is HttpOnly and the CSRF token stays in memory (api.ts).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Schemas } from './api.ts';

export interface Session {
  userId: string;
  email: string;
  workspaceId: string;
  role: Schemas['WorkspaceRole'];
  workspaces: Schemas['UserWorkspaces'];
  expiresAt: string;
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
