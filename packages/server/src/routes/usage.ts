/**
 * @module Usage of the current period in STU: getCurrentUsage (GET /usage/current) and getUsageV1
 * (GET /v1/usage); getDailyUsage (GET /usage/daily, any member's session) day by day. Read from the
 * usage ledger; no money figures.
 */
import { currentUsage, dailyUsage } from '../domain/runs/index.ts';
import { authOf, type Handler, type Handlers, workspaceOf } from './handler.ts';

const getCurrentUsage: Handler<'getCurrentUsage'> = async (c, _input, { db, clock }) => {
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await currentUsage(db, clock, workspaceId) };
};

const getDailyUsage: Handler<'getDailyUsage'> = async (c, _input, { db, clock }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await dailyUsage(db, clock, workspaceId) };
};

export const usageHandlers = { getCurrentUsage, getUsageV1: getCurrentUsage, getDailyUsage } satisfies Partial<Handlers>;
