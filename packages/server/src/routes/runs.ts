/**
 * @module Runs: getRun, listRuns, cancelRun and their Set B twins under /v1. The workspace is the
 * key's, or the session's (any member reads runs); another workspace's run is `404 not_found`.
 */
import { type Handler, type Handlers, workspaceOf } from './handler.ts';

const getRun: Handler<'getRun'> = async (c, { params }, { runs }) => {
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await runs.getRun(workspaceId, params.run_id) };
};

const listRuns: Handler<'listRuns'> = async (c, { query }, { runs }) => {
  const workspaceId = workspaceOf(c);
  const filter = {
    status: query.status,
    agentSlug: query.agent_slug,
    alias: query.alias,
    source: query.source,
    createdAfter: query.createdAfter === undefined ? undefined : new Date(query.createdAfter),
    createdBefore: query.createdBefore === undefined ? undefined : new Date(query.createdBefore),
    limit: query.limit,
    offset: query.offset,
  };
  return { status: 200, body: await runs.listRuns(workspaceId, filter) };
};

const cancelRun: Handler<'cancelRun'> = async (c, { params }, { runs }) => {
  // A key's workspace, or the session's (any member may cancel from the panel, as it may invoke).
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await runs.cancelRun(workspaceId, params.run_id) };
};

export const runHandlers = {
  getRun,
  listRuns,
  cancelRun,
  getRunV1: getRun,
  listRunsV1: listRuns,
  cancelRunV1: cancelRun,
} satisfies Partial<Handlers>;
