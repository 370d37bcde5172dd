/**
 * @module listDrafts and getDraft (any member's session): what the workspace's agents wrote for people
 * to review. Another workspace's draft is `404 not_found`.
 */
import { authOf, type Handler, type Handlers } from './handler.ts';

const listDrafts: Handler<'listDrafts'> = async (c, { query }, { drafts }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return {
    status: 200,
    body: await drafts.list({ workspaceId, runId: query.run_id, agentSlug: query.agent_slug, limit: query.limit, offset: query.offset }),
  };
};

const getDraft: Handler<'getDraft'> = async (c, { params }, { drafts }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await drafts.get(workspaceId, params.draft_id) };
};

export const draftHandlers = { listDrafts, getDraft } satisfies Partial<Handlers>;
