/**
 * @module Runs: getRun, listRuns, cancelRun and their Set B twins under /v1. The workspace is the
 * key's; another workspace's run is `404 not_found`.
 */
import type { RunStatus } from '../domain/runs/index.ts';
import { authOf, type OperationHandler } from './handler.ts';

const getRun: OperationHandler = async (c, { runs }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  return c.json(await runs.getRun(workspaceId, c.get('valid').params.run_id as string), 200);
};

const listRuns: OperationHandler = async (c, { runs }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  const query = c.get('valid').query as { status?: RunStatus; agent_slug?: string; limit: number; offset: number };
  return c.json(
    await runs.listRuns(workspaceId, { status: query.status, agentSlug: query.agent_slug, limit: query.limit, offset: query.offset }),
    200,
  );
};

const cancelRun: OperationHandler = async (c, { runs }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  return c.json(await runs.cancelRun(workspaceId, c.get('valid').params.run_id as string), 200);
};

export const runHandlers = {
  getRun,
  listRuns,
  cancelRun,
  getRunV1: getRun,
  listRunsV1: listRuns,
  cancelRunV1: cancelRun,
} satisfies Record<string, OperationHandler>;
