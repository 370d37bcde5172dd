/**
 * @module Usage of the current period in STU: getCurrentUsage (GET /usage/current) and getUsageV1
 * (GET /v1/usage); getDailyUsage (GET /usage/daily, any member's session) day by day. Read from the
 * usage ledger; no money figures. The spending kill switches: getKillSwitches (any member) and
 * setManualKillSwitch (an admin; the same switch as `service kill-switch on|off`).
 */
import { auditOf, authOf, type Handler, type Handlers, workspaceOf } from './handler.ts';

const getCurrentUsage: Handler<'getCurrentUsage'> = async (c, _input, { usage }) => {
  const workspaceId = workspaceOf(c);
  return { status: 200, body: await usage.current(workspaceId) };
};

const getDailyUsage: Handler<'getDailyUsage'> = async (c, _input, { usage }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await usage.daily(workspaceId) };
};

const getKillSwitches: Handler<'getKillSwitches'> = async (c, _input, { usage }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await usage.killSwitches(workspaceId) };
};

const setManualKillSwitch: Handler<'setManualKillSwitch'> = async (c, { body }, services) => {
  const { usage } = services;
  const { workspaceId, userId } = authOf(c, 'adminSession');
  await usage.setManualKillSwitch(workspaceId, body.engaged, { reason: body.reason, engagedBy: userId }, auditOf(c, services));
  return { status: 200, body: await usage.killSwitches(workspaceId) };
};

export const usageHandlers = { getCurrentUsage, getUsageV1: getCurrentUsage, getDailyUsage, getKillSwitches, setManualKillSwitch } satisfies Partial<Handlers>;
