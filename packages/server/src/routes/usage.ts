/**
 * @module Usage of the current period in STU: getCurrentUsage (GET /usage/current) and getUsageV1
 * (GET /v1/usage); getDailyUsage (GET /usage/daily, any member's session) day by day. Read from the
 * usage ledger; no money figures. The spending kill switches: getKillSwitches (any member) and
 * setManualKillSwitch (an admin; the same switch as `service kill-switch on|off`).
 */
import { currentUsage, dailyUsage, killSwitches, setManualKillSwitch as setManual } from '../domain/runs/index.ts';
import { authOf, type Handler, type Handlers, workspaceOf } from './handler.ts';

const getCurrentUsage: Handler<'getCurrentUsage'> = async (c, _input, { db, clock }) => {
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await currentUsage(db, clock, workspaceId) };
};

const getDailyUsage: Handler<'getDailyUsage'> = async (c, _input, { db, clock }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await dailyUsage(db, clock, workspaceId) };
};

const getKillSwitches: Handler<'getKillSwitches'> = async (c, _input, { db, clock, budget }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await killSwitches(db, workspaceId, clock.now(), budget.limits) };
};

const setManualKillSwitch: Handler<'setManualKillSwitch'> = async (c, { body }, { db, clock, budget }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  await setManual(db, workspaceId, body.engaged, clock.now(), { reason: body.reason, engagedBy: userId });
  return { status: 200, body: await killSwitches(db, workspaceId, clock.now(), budget.limits) };
};

export const usageHandlers = { getCurrentUsage, getUsageV1: getCurrentUsage, getDailyUsage, getKillSwitches, setManualKillSwitch } satisfies Partial<Handlers>;
