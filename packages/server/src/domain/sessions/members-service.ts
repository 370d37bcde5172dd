/**
 * @module The member service handlers receive: the members of a workspace, invitations, and account
 * resets (members.ts, invitations.ts, resets.ts). Accepting an invitation and redeeming a reset open or seal TOTP
 * secrets with the app's secret box.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { acceptInvitation, createInvitation, listMembers, removeMember, updateMember } from './members.ts';
import { listInvitations, previewInvitation, resendInvitation, revokeInvitation } from './invitations.ts';
import { previewAccountReset, redeemAccountReset, resetMember } from './resets.ts';
import type { Role } from './users.ts';

export type MemberService = ReturnType<typeof createMemberService>;

export function createMemberService(deps: { db: Db; clock: Clock; secretBox: SecretBox }) {
  const { db, clock, secretBox } = deps;
  return {
    list: (workspaceId: string) => listMembers(db, workspaceId),
    update: (workspaceId: string, actorId: string, userId: string, role: Role) => updateMember(db, workspaceId, actorId, userId, role),
    remove: (workspaceId: string, actorId: string, userId: string) => removeMember(db, workspaceId, actorId, userId),
    invite: (input: Parameters<typeof createInvitation>[2]) => createInvitation(db, clock, input),
    acceptInvitation: (input: { token: string; password: string }) => acceptInvitation(db, clock, secretBox, input),
    /** The pending and expired invitations of a workspace. */
    invitations: (workspaceId: string) => listInvitations(db, clock, workspaceId),
    resendInvitation: (input: Parameters<typeof resendInvitation>[2]) => resendInvitation(db, clock, input),
    revokeInvitation: (input: Parameters<typeof revokeInvitation>[2]) => revokeInvitation(db, clock, input),
    previewInvitation: (token: string) => previewInvitation(db, clock, token),
    /** An owner's or admin's reset of a member of their workspace. */
    reset: (input: Parameters<typeof resetMember>[2]) => resetMember(db, clock, input),
    previewReset: (token: string) => previewAccountReset(db, clock, token),
    redeemReset: (input: { token: string; password: string }) => redeemAccountReset(db, clock, secretBox, input),
  };
}
