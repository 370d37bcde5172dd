/**
 * @module `service agents list|pause|resume`, `service plan show|set` and `service kill-switch
 * on|off|status`: the operator's controls of agents, plans and the manual spending switch. They work
 * on the store directly (like `keys`), so with the embedded store they run while the server is
 * stopped; against PostgreSQL every running instance sees the change at its next request. Each also goes
 * through a running server's operator API with `--url` (cli/operator-api.ts).
 */
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { AGENT_CATALOG, getAgent } from '../vocabulary/catalog.ts';
import { isPlanName, PLAN_NAMES, PLANS } from '../vocabulary/plans.ts';
import { pauseAgentAudited, resumeAgentAudited } from '../domain/agents/panel.ts';
import { getPlan, pausedAgents, setPlan } from '../domain/agents/settings.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { killSwitchStatus, setManualKillSwitchAudited, unbilledInWindows } from '../domain/spending/index.ts';
import { KILL_SWITCH_LIMITS } from '../domain/usage/index.ts';
import { resolveWorkspace } from './keys.ts';
import { openCliStore } from '../runtime/store.ts';
import { type CommandTable, commandsOf, type Flags, type Print } from './commands.ts';
import { OPERATOR_API_HELP, OPERATOR_API_OPTIONS, type OperatorApi, operatorApi, operatorWorkspace, workspacePath } from './operator-api.ts';
import type { OperatorWorkspace } from '../domain/workspaces/index.ts';
import type { Schema } from '../contract.ts';

type KillSwitches = Schema<'KillSwitches'>;
type WorkspaceAgentList = Schema<'WorkspaceAgentList'>;
type WorkspaceAgent = Schema<'WorkspaceAgent'>;
import { UsageError, WORKSPACE_COMMAND_OPTIONS } from './usage.ts';

const COMMON = WORKSPACE_COMMAND_OPTIONS;
const REMOTE = { ...COMMON, ...OPERATOR_API_OPTIONS } as const;

const OPTIONS = {
  'agents list': REMOTE,
  'agents pause': { ...REMOTE, reason: { type: 'string' } },
  'agents resume': REMOTE,
  'plan show': REMOTE,
  'plan set': REMOTE,
  'kill-switch on': REMOTE,
  'kill-switch off': REMOTE,
  'kill-switch status': REMOTE,
} as const;

/** The commands that also go through a running server's operator API (`--url`). */
type RemoteCommand = Command;

type Command = keyof typeof OPTIONS;

const WHERE = `  --workspace W   the workspace (default: the only one)
  --data-dir D    embedded store directory (default ./data, or DATA_DIR)
  --json          machine-readable output`;

const REMOTE_WHERE = `${WHERE}
${OPERATOR_API_HELP}`;

const AGENT_HELP: Record<'agents' | 'plan' | 'kill-switch' | Command, string> = {
  agents: `Usage: service agents list|pause|resume …

  agents list                        The eleven agents: in the plan or not, active or paused (with the reason)
  agents pause <slug> --reason R     Pause an agent: invocations answer 403 agent_disabled with the reason
  agents resume <slug>               Resume a paused agent`,
  plan: `Usage: service plan show|set …

  plan show                          The workspace's plan, its agents, aliases and monthly quota
  plan set <${PLAN_NAMES.join('|')}>   Change the plan (takes effect at the next request)`,
  'kill-switch': `Usage: service kill-switch on|off|status

  kill-switch on        Turn the manual spending switch on: new invocations answer 429 kill_switch (kind manual)
  kill-switch off       Turn it off
  kill-switch status    The manual switch and this hour's and day's consumption against their limits`,
  'agents list': `Usage: service agents list [--workspace W] [--json] [--data-dir D] [--url U]

Lists the agents with their slug, default alias, and state: active, paused (reason) or not in the plan.
${REMOTE_WHERE}`,
  'agents pause': `Usage: service agents pause <slug> --reason R [--workspace W] [--json] [--data-dir D] [--url U]

Pauses the agent. Invocations of it answer 403 agent_disabled with agentSlug and this reason, and the
orchestrator stops routing to it. Pausing a paused agent changes its reason.
  --reason R      why, shown to callers (required)
${REMOTE_WHERE}`,
  'agents resume': `Usage: service agents resume <slug> [--workspace W] [--json] [--data-dir D] [--url U]

Resumes a paused agent.
${REMOTE_WHERE}`,
  'plan show': `Usage: service plan show [--workspace W] [--json] [--data-dir D] [--url U]

Shows the workspace's plan (growth until one is set).
${REMOTE_WHERE}`,
  'plan set': `Usage: service plan set <${PLAN_NAMES.join('|')}> [--workspace W] [--json] [--data-dir D] [--url U]

  starter     orchestrator, sales, marketing, customer-care; Prelude, Sonata, Symphony; 2,000,000 STU a month
  growth      all eleven agents; Prelude, Sonata, Symphony; 10,000,000 STU a month
  enterprise  all eleven agents; every alias including Concerto; 50,000,000 STU a month
${REMOTE_WHERE}`,
  'kill-switch on': `Usage: service kill-switch on [--workspace W] [--json] [--data-dir D] [--url U]

Turns the manual switch on: new invocations answer 429 kill_switch with kind "manual" and activeSince;
a run in progress fails with reason kill_switch:manual when it ends.
${REMOTE_WHERE}`,
  'kill-switch off': `Usage: service kill-switch off [--workspace W] [--json] [--data-dir D] [--url U]

Turns the manual switch off. The hour and day switches clear by themselves when their UTC window ends.
${REMOTE_WHERE}`,
  'kill-switch status': `Usage: service kill-switch status [--workspace W] [--json] [--data-dir D] [--url U]

Shows the manual switch and the current UTC hour and day: STU spent (including runs in progress)
against the limits (1,000,000 per run, 10,000,000 per hour, 80,000,000 per day) and whether tripped,
and the STU engines reported beyond the runs' reservations (recorded on the runs, not billed;
unbilledStu with --json).
With --url, --json prints the contract's KillSwitches (GET /kill-switches), which has no unbilled STU.
${REMOTE_WHERE}`,
};

/** `agents …`, `plan …` and `kill-switch …` in the command table. */
export const agentCommands: CommandTable = {
  groups: { agents: AGENT_HELP.agents, plan: AGENT_HELP.plan, 'kill-switch': AGENT_HELP['kill-switch'] },
  commands: commandsOf(OPTIONS, (command) => ({
    options: OPTIONS[command],
    help: AGENT_HELP[command],
    run: ({ values, positionals, print, env }) => runAgentCommand(command, values, positionals, print, env),
  })),
};

async function runAgentCommand(command: Command, values: Flags, positionals: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  const needsOne = command === 'agents pause' || command === 'agents resume' || command === 'plan set';
  if (needsOne && positionals.length !== 1)
    throw new UsageError(`Give exactly one ${command === 'plan set' ? 'plan' : 'agent slug'}.\n\n${AGENT_HELP[command]}`);
  if (!needsOne && positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${AGENT_HELP[command]}`);
  const target = positionals[0] ?? '';
  if ((command === 'agents pause' || command === 'agents resume') && !getAgent(target)) {
    throw new UsageError(`No agent has the slug ${target}. Agents: ${AGENT_CATALOG.map((a) => a.slug).join(', ')}.`);
  }
  if (command === 'plan set' && !isPlanName(target)) throw new UsageError(`The plan is one of ${PLAN_NAMES.join(', ')}.`);

  const config = loadConfig({ 'data-dir': typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined }, env);
  const reason = typeof values.reason === 'string' ? values.reason.trim() : '';
  if (command === 'agents pause' && reason === '') throw new UsageError(`--reason is required.\n\n${AGENT_HELP[command]}`);
  const api = operatorApi(values, config);
  if (api) {
    const workspaceId = await operatorWorkspace(api, typeof values.workspace === 'string' ? values.workspace : undefined);
    return remoteCommand(command, api, workspaceId, target, reason, values.json === true, print);
  }
  const store = await openCliStore(config, command);
  try {
    const db = store.db;
    const workspaceId = await resolveWorkspace(db, typeof values.workspace === 'string' ? values.workspace : undefined);
    const json = values.json === true;
    const clock = systemClock;
    switch (command) {
      case 'agents list': {
        const plan = PLANS[await getPlan(db, workspaceId)];
        const paused = await pausedAgents(db, workspaceId);
        const agents = AGENT_CATALOG.map((a) => {
          const state = !(plan.agents as readonly string[]).includes(a.slug) ? 'not_in_plan' : paused.has(a.slug) ? 'paused' : 'active';
          return { slug: a.slug, name: a.name, alias: a.defaultAlias, state, reason: paused.get(a.slug) ?? null };
        });
        printAgents(plan.name, agents, json, print);
        return 0;
      }
      case 'agents pause': {
        await db.transaction((tx) => pauseAgentAudited(tx, clock, workspaceId, target, reason, COMMAND_LINE));
        printPaused(target, reason, json, print);
        return 0;
      }
      case 'agents resume': {
        printResumed(target, await db.transaction((tx) => resumeAgentAudited(tx, clock, workspaceId, target, COMMAND_LINE)), json, print);
        return 0;
      }
      case 'plan show': {
        printPlan(PLANS[await getPlan(db, workspaceId)], json, print);
        return 0;
      }
      case 'plan set': {
        await setPlan(db, clock, workspaceId, target as (typeof PLAN_NAMES)[number]);
        print(json ? JSON.stringify({ plan: target }) : `Plan set to ${target}.`);
        return 0;
      }
      case 'kill-switch on':
      case 'kill-switch off': {
        await db.transaction((tx) => setManualKillSwitchAudited(tx, workspaceId, command === 'kill-switch on', clock.now(), {}, COMMAND_LINE));
        const status = await killSwitchStatus(db, workspaceId, clock.now(), KILL_SWITCH_LIMITS);
        printManual(status.manualSince?.toISOString() ?? null, json, print);
        return 0;
      }
      case 'kill-switch status': {
        const status = await killSwitchStatus(db, workspaceId, clock.now(), KILL_SWITCH_LIMITS);
        const unbilled = await unbilledInWindows(db, workspaceId, clock.now());
        if (json) print(JSON.stringify({ ...status, hour: { ...status.hour, unbilledStu: unbilled.hour }, day: { ...status.day, unbilledStu: unbilled.day } }));
        else {
          print(`manual  ${status.manualSince ? `on since ${status.manualSince.toISOString()}` : 'off'}`);
          for (const scope of ['hour', 'day'] as const) {
            const w = status[scope];
            print(
              `${scope.padEnd(7)} ${w.spentStu.toLocaleString('en')} / ${w.limitStu.toLocaleString('en')} STU since ${w.windowStart.toISOString()}` +
                (w.reservedStu > 0 ? ` (${w.reservedStu.toLocaleString('en')} held by runs in progress)` : '') +
                (unbilled[scope] > 0 ? ` (${unbilled[scope].toLocaleString('en')} reported by engines beyond reservations, not billed)` : '') +
                (w.trippedAt ? `, tripped at ${w.trippedAt.toISOString()}` : ''),
            );
          }
        }
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}

/** `agents …`, `plan …` and `kill-switch …` through the operator API: the workspace's agents, settings and kill switches. */
async function remoteCommand(
  command: RemoteCommand,
  api: OperatorApi,
  workspaceId: string,
  target: string,
  reason: string,
  json: boolean,
  print: Print,
): Promise<number> {
  switch (command) {
    case 'agents list': {
      const list = await api.call<WorkspaceAgentList>('GET', workspacePath(workspaceId, 'agents'));
      const agents = list.data.map((a) => ({ slug: a.slug, name: a.name, alias: a.alias, state: a.state, reason: a.pausedReason }));
      printAgents(list.plan, agents, json, print);
      return 0;
    }
    case 'agents pause': {
      await api.call<WorkspaceAgent>('POST', workspacePath(workspaceId, 'agents', target, 'pause'), { reason });
      printPaused(target, reason, json, print);
      return 0;
    }
    case 'agents resume': {
      // Whether it was paused, as on the store: read before the change.
      const before = await api.call<WorkspaceAgentList>('GET', workspacePath(workspaceId, 'agents'));
      const was = before.data.some((a) => a.slug === target && a.pausedAt !== null);
      await api.call<WorkspaceAgent>('POST', workspacePath(workspaceId, 'agents', target, 'resume'));
      printResumed(target, was, json, print);
      return 0;
    }
    case 'plan show': {
      const workspace = await api.call<OperatorWorkspace>('GET', workspacePath(workspaceId));
      printPlan(PLANS[workspace.plan], json, print);
      return 0;
    }
    case 'plan set': {
      await api.call<OperatorWorkspace>('PATCH', workspacePath(workspaceId), { plan: target });
      print(json ? JSON.stringify({ plan: target }) : `Plan set to ${target}.`);
      return 0;
    }
    case 'kill-switch on':
    case 'kill-switch off': {
      const switches = await api.call<KillSwitches>('PUT', workspacePath(workspaceId, 'kill-switches', 'manual'), { engaged: command === 'kill-switch on' });
      printManual(switches.manual.since, json, print);
      return 0;
    }
    case 'kill-switch status': {
      const switches = await api.call<KillSwitches>('GET', workspacePath(workspaceId, 'kill-switches'));
      if (json) {
        print(JSON.stringify(switches));
        return 0;
      }
      print(`manual  ${switches.manual.since ? `on since ${switches.manual.since}` : 'off'}`);
      for (const scope of ['hour', 'day'] as const) {
        const w = switches[scope];
        print(
          `${scope.padEnd(7)} ${(w.spentStu ?? 0).toLocaleString('en')} / ${(w.limitStu ?? 0).toLocaleString('en')} STU since ${w.windowStart}` +
            ((w.reservedStu ?? 0) > 0 ? ` (${(w.reservedStu ?? 0).toLocaleString('en')} held by runs in progress)` : '') +
            (w.engaged ? `, tripped at ${w.since}` : ''),
        );
      }
      return 0;
    }
  }
}

function printPlan(plan: (typeof PLANS)[keyof typeof PLANS], json: boolean, print: Print): void {
  if (json) print(JSON.stringify(plan));
  else print(`${plan.name}: agents ${plan.agents.join(', ')}; aliases ${plan.aliases.join(', ')}; ${plan.quotaStu.toLocaleString('en')} STU a month`);
}

/** The manual switch after `kill-switch on|off`: on since when, or off. */
function printManual(since: string | null, json: boolean, print: Print): void {
  print(json ? JSON.stringify({ manual: since !== null, activeSince: since }) : since ? `Manual kill switch on since ${since}.` : 'Manual kill switch off.');
}

function printAgents(
  plan: string,
  agents: { slug: string; name: string; alias: string; state: string; reason: string | null }[],
  json: boolean,
  print: Print,
): void {
  if (json) print(JSON.stringify({ plan, data: agents }));
  else {
    print(`Plan: ${plan}`);
    for (const a of agents) print(`${a.slug.padEnd(14)} ${a.alias.padEnd(9)} ${a.state}${a.reason ? ` (${a.reason})` : ''}`);
  }
}

function printPaused(slug: string, reason: string, json: boolean, print: Print): void {
  print(json ? JSON.stringify({ slug, state: 'paused', reason }) : `Paused ${slug}: ${reason}`);
}

function printResumed(slug: string, wasPaused: boolean, json: boolean, print: Print): void {
  print(json ? JSON.stringify({ slug, state: 'active', wasPaused }) : wasPaused ? `Resumed ${slug}.` : `${slug} was not paused.`);
}
