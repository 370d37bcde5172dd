/**
 * @module Where a session may act when single sign-on is in play, one rule for sign-in, every request and the
 * workspace switch:
 * - a session opened by a workspace's identity provider acts on that workspace only (another workspace's provider
 *   never vouches for a person here, and this one's never for them elsewhere);
 * - a password session acts on a workspace whose single sign-on is required only for its owners, who keep the
 *   password as the way back in when the identity provider fails.
 */

/**
 * The SQL condition of the rule, over the expressions that name the session's signing workspace (NULL for a
 * password), the workspace it would act on and the user's role there. `sso_settings` is read by a sub-query.
 */
export function ssoAdmits(expr: { ssoWorkspace: string; workspace: string; role: string }): string {
  return `(${expr.ssoWorkspace} = ${expr.workspace} OR (${expr.ssoWorkspace} IS NULL AND (${expr.role} = 'owner' OR NOT EXISTS (
    SELECT 1 FROM sso_settings sso_rule WHERE sso_rule.workspace_id = ${expr.workspace} AND sso_rule.sso_required))))`;
}

/** The workspaces a session lists: a single sign-on session's own workspace alone, a password session's all. */
export function sessionWorkspaces<W extends { id: string }>(workspaces: W[], ssoWorkspaceId: string | null): W[] {
  return ssoWorkspaceId === null ? workspaces : workspaces.filter((w) => w.id === ssoWorkspaceId);
}
