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
import type { AuditContext } from '../audit/index.ts';

export type MemberService = ReturnType<typeof createMemberService>;

export function createMemberService(deps: { db: Db; clock: Clock; secretBox: SecretBox }) {
  const { db, clock, secretBox } = deps;
  return {
    list: (workspaceId: string) => listMembers(db, workspaceId),
    update: (workspaceId: string, actorId: string, userId: string, role: Role, audit?: AuditContext) =>
      updateMember(db, clock, workspaceId, actorId, userId, role, audit),
    remove: (workspaceId: string, actorId: string, userId: string, audit?: AuditContext) => removeMember(db, clock, workspaceId, actorId, userId, audit),
    invite: (input: Parameters<typeof createInvitation>[2], audit?: AuditContext) => createInvitation(db, clock, input, audit),
    acceptInvitation: (input: Parameters<typeof acceptInvitation>[3], audit?: AuditContext) => acceptInvitation(db, clock, secretBox, input, audit),
    /** The pending and expired invitations of a workspace. */
    invitations: (workspaceId: string) => listInvitations(db, clock, workspaceId),
    resendInvitation: (input: Parameters<typeof resendInvitation>[2], audit?: AuditContext) => resendInvitation(db, clock, input, audit),
    revokeInvitation: (input: Parameters<typeof revokeInvitation>[2], audit?: AuditContext) => revokeInvitation(db, clock, input, audit),
    previewInvitation: (token: string) => previewInvitation(db, clock, token),
    /** An owner's or admin's reset of a member of their workspace. */
    reset: (input: Parameters<typeof resetMember>[2], audit?: AuditContext) => resetMember(db, clock, input, audit),
    previewReset: (token: string) => previewAccountReset(db, clock, token),
    redeemReset: (input: Parameters<typeof redeemAccountReset>[3], audit?: AuditContext) => redeemAccountReset(db, clock, secretBox, input, audit),
  };
}
