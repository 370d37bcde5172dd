/**
 * @module The members of the session's workspace (owner or admin with two-step verification):
 * listMembers, updateMember, removeMember, createInvitation, listInvitations, resendInvitation,
 * revokeInvitation, resetMember; and previewInvitation, acceptInvitation, previewAccountReset,
 * redeemAccountReset (no credential: the single-use token, and for accepting and redeeming a password).
 */
import { zRole } from '../domain/sessions/users.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listMembers: Handler<'listMembers'> = async (c, _input, { members }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: { data: await members.list(workspaceId) } };
};

const updateMember: Handler<'updateMember'> = async (c, { params, body }, services) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  return { status: 200, body: await services.members.update(workspaceId, userId, params.user_id, body.role, auditOf(c, services)) };
};

const removeMember: Handler<'removeMember'> = async (c, { params }, services) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  await services.members.remove(workspaceId, userId, params.user_id, auditOf(c, services));
  return { status: 204 };
};

const createInvitation: Handler<'createInvitation'> = async (c, { body }, services) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const invitation = await services.members.invite({ workspaceId, invitedBy: userId, email: body.email, role: body.role }, auditOf(c, services));
  keepUnredacted(c, invitation.token);
  return { status: 201, body: invitation };
};

const listInvitations: Handler<'listInvitations'> = async (c, _input, { members }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: { data: await members.invitations(workspaceId) } };
};

const resendInvitation: Handler<'resendInvitation'> = async (c, { params }, services) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const invitation = await services.members.resendInvitation({ workspaceId, actorId: userId, invitationId: params.invitation_id }, auditOf(c, services));
  keepUnredacted(c, invitation.token);
  return { status: 201, body: invitation };
};

const revokeInvitation: Handler<'revokeInvitation'> = async (c, { params }, services) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  await services.members.revokeInvitation({ workspaceId, actorId: userId, invitationId: params.invitation_id }, auditOf(c, services));
  return { status: 204 };
};

const previewInvitation: Handler<'previewInvitation'> = async (_c, { body }, { members }) => {
  return { status: 200, body: await members.previewInvitation(body.token) };
};

const acceptInvitation: Handler<'acceptInvitation'> = async (c, { body }, services) => {
  const outcome = await services.members.acceptInvitation(body, auditOf(c, services));
  if ('setup' in outcome) {
    keepUnredacted(c, outcome.setup.totpSecret);
    return { status: 202, body: outcome.setup };
  }
  if (outcome.accepted.totpSecret) keepUnredacted(c, outcome.accepted.totpSecret);
  return { status: 200, body: outcome.accepted };
};

const resetMember: Handler<'resetMember'> = async (c, { params, body }, services) => {
  const { workspaceId, userId, role } = authOf(c, 'adminSession');
  const reset = { workspaceId, actorId: userId, actorRole: zRole.parse(role), userId: params.user_id, reset: body.reset };
  const created = await services.members.reset(reset, auditOf(c, services));
  keepUnredacted(c, created.token);
  return { status: 201, body: created };
};

const previewAccountReset: Handler<'previewAccountReset'> = async (_c, { body }, { members }) => {
  return { status: 200, body: await members.previewReset(body.token) };
};

const redeemAccountReset: Handler<'redeemAccountReset'> = async (c, { body }, services) => {
  const outcome = await services.members.redeemReset(body, auditOf(c, services));
  if ('setup' in outcome) {
    keepUnredacted(c, outcome.setup.totpSecret);
    return { status: 202, body: outcome.setup };
  }
  if (outcome.redeemed.totpSecret) keepUnredacted(c, outcome.redeemed.totpSecret);
  return { status: 200, body: outcome.redeemed };
};

export const memberHandlers = {
  listMembers,
  updateMember,
  removeMember,
  createInvitation,
  listInvitations,
  resendInvitation,
  revokeInvitation,
  previewInvitation,
  acceptInvitation,
  resetMember,
  previewAccountReset,
  redeemAccountReset,
} satisfies Partial<Handlers>;
