/**
 * @module Usage of the current period in STU: getCurrentUsage (GET /usage/current) and getUsageV1
 * (GET /v1/usage). Read from the usage ledger; no money figures.
 */
import { currentUsage } from '../domain/runs/index.ts';
import { authOf, type OperationHandler } from './handler.ts';

const getCurrentUsage: OperationHandler = async (c, { db, clock }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  return c.json(await currentUsage(db, clock, workspaceId), 200);
};

export const usageHandlers = { getCurrentUsage, getUsageV1: getCurrentUsage } satisfies Record<string, OperationHandler>;
