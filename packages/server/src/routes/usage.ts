/**
 * @module Usage of the current period in STU: getCurrentUsage (GET /usage/current) and getUsageV1
 * (GET /v1/usage). Read from the usage ledger; no money figures.
 */
import { currentUsage } from '../domain/runs/index.ts';
import { type Handler, type Handlers, workspaceOf } from './handler.ts';

const getCurrentUsage: Handler<'getCurrentUsage'> = async (c, _input, { db, clock }) => {
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await currentUsage(db, clock, workspaceId) };
};

export const usageHandlers = { getCurrentUsage, getUsageV1: getCurrentUsage } satisfies Partial<Handlers>;
