/**
 * @module The operator service handlers receive: the operator's use-cases on workspaces (list, create with
 * its first credentials, get, update, delete; index.ts, init.ts), a workspace's users (sessions/users.ts) and an
 * account's recovery by email (sessions/resets.ts). Verifying the operator's token is domain/operators' `OperatorService`.
 */
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import type { AuditContext } from '../audit/index.ts';
import { resetUserByEmail } from '../sessions/resets.ts';
import { addWorkspaceUser, listUsers } from '../sessions/users.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { deleteWorkspace, getOperatorWorkspace, listOperatorWorkspaces, updateWorkspace, type WorkspaceUpdate } from './index.ts';
import { createCustomerWorkspace } from './init.ts';

export type OperatorWorkspaceService = ReturnType<typeof createOperatorWorkspaceService>;

export function createOperatorWorkspaceService(deps: { db: Db; clock: Clock; secretBox: SecretBox }) {
  const { db, clock, secretBox } = deps;
  return {
    listWorkspaces: () => listOperatorWorkspaces(db),
    /** A customer workspace with its owner and first key: the one answer that shows them. */
    createWorkspace: (body: Schema<'CreateWorkspaceRequest'>, audit?: AuditContext) => createCustomerWorkspace(db, clock, secretBox, body, audit),
    getWorkspace: (workspaceId: string) => getOperatorWorkspace(db, workspaceId),
    updateWorkspace: (workspaceId: string, update: WorkspaceUpdate, audit?: AuditContext) => updateWorkspace(db, clock, workspaceId, update, audit),
    deleteWorkspace: (workspaceId: string) => deleteWorkspace(db, workspaceId),
    /** The users of a workspace, with their role. */
    listUsers: (workspaceId: string) => listUsers(db, workspaceId),
    /** A new user in the workspace, with the password and TOTP secret shown once. */
    addUser: (workspaceId: string, request: Schema<'CreateWorkspaceUserRequest'>, audit?: AuditContext) =>
      addWorkspaceUser(db, clock, workspaceId, request, secretBox, audit),
    /** The recovery of any account, by its email. */
    resetUser: (input: Parameters<typeof resetUserByEmail>[2], audit?: AuditContext) => resetUserByEmail(db, clock, input, audit),
  };
}
