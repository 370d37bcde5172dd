/**
 * @module What the parts of the run service share: the store, the clock, the engines, the budget
 * settings, the lease, and the runs this process executes (so a cancel can stop an engine at once),
 * whose leases a heartbeat renews.
 */
import type { Clock } from '../../clock.ts';
import type { Engines, TokenUsage } from '../../engine/index.ts';
import type { AgentDefinitions, ToolSource } from '../agent-loop/index.ts';
import type { CloseBatcher } from './close-batch.ts';
import type { CloseDetail } from './close-detail.ts';
import type { ConversationCache } from './conversation.ts';
import type { WorkspaceAgents } from '../agents/availability.ts';
import type { Redactor } from '../../redact/index.ts';
import type { Db } from '../../store/db.ts';
import type { BudgetSettings } from '../spending/budget.ts';
import { renewLeases } from './queries/run-row.ts';
import type { RunEventHub } from '../run-events/hub.ts';

interface Heartbeat {
  /** Starts renewing leases, if not already; it stops by itself once nothing executes. */
  start(): void;
}

interface UnbilledEntry {
  workspaceId: string;
  runId: string;
  alias: string;
  billed: TokenUsage;
  reported: TokenUsage;
  unbilledStu: number;
}

/** What starting a run reads (start.ts): the checks, the reservation, the run's row. */
export interface StartContext {
  db: Db;
  clock: Clock;
  /** The workspace's plan, quota and paused agents: from memory (domain/agents/settings-cache.ts). */
  agentSettings: (workspaceId: string) => Promise<WorkspaceAgents & { quotaStu: number }>;
  /** The earlier turns of a conversation, given before an invocation's own messages: from memory (conversation.ts). */
  conversations: ConversationCache;
  /** The app's redactor (the fixed rules and the deployment's own names): engine text passes it. */
  redactor: Redactor;
  budget: BudgetSettings;
  leaseMs: number;
}

/** What closing a run uses (close.ts): the closing statement, the conversation's turns, the usage tally. */
export interface CloseContext {
  db: Db;
  clock: Clock;
  conversations: ConversationCache;
  redactor: Redactor;
  budget: BudgetSettings;
  /** This instance charged the workspace's period: the usage tally reads it again (usage-tally.ts). */
  usageCharged?: ((workspaceId: string) => void) | undefined;
  /** A run whose engine reported more than its reservation allowed (billed within it; the rest recorded). */
  logUnbilled?: ((entry: UnbilledEntry) => void) | undefined;
  /** The closing statements of runs that close alone, committed together when they wait (close-batch.ts). */
  closes: CloseBatcher;
  /** The workspaces whose closes go with their events (close-detail.ts). */
  closeDetail: CloseDetail;
}

/** What executing a run uses besides closing it (execute.ts): the engines, the agents and their tools, its log, its lease. */
export interface ExecuteContext {
  clock: Clock;
  engines: Engines;
  redactor: Redactor;
  /** The tools of a workspace's connected integrations (from memory). */
  tools: ToolSource;
  /** An agent's definition: instructions, tools, approvals, step limit (from memory). */
  agents: AgentDefinitions;
  /** How long a tool call may take (agent-loop TOOL_TIMEOUT_MS when absent). */
  toolTimeoutMs?: number | undefined;
  /** How long a streamed run goes on after its client left, waiting for a reader of its events. */
  streamResumeMs: number;
  logError?: ((error: unknown) => void) | undefined;
  /** The event logs of the runs executing here, and their readers (run-events/hub.ts). */
  runEvents: RunEventHub;
  /** Runs executing in this process, by id. */
  executing: Map<string, AbortController>;
  heartbeat: Heartbeat;
}

/** Everything the run service's parts share; each phase reads its own part of it. */
export interface RunContext extends StartContext, CloseContext, ExecuteContext {}

/**
 * Renews the lease of the runs this process executes, every quarter of the lease, while there
 * are any; a run that is no longer in progress (canceled on another instance, or swept) is
 * stopped here.
 */
export function createHeartbeat(
  db: Db,
  clock: Clock,
  leaseMs: number,
  executing: Map<string, AbortController>,
  logError?: (error: unknown) => void,
): Heartbeat {
  let timer: NodeJS.Timeout | undefined;
  async function beat(): Promise<void> {
    const ids = [...executing.keys()];
    if (ids.length === 0) return;
    const alive = new Set(await renewLeases(db, ids, new Date(clock.now().getTime() + leaseMs)));
    for (const id of ids) if (!alive.has(id)) executing.get(id)?.abort();
  }
  return {
    start() {
      if (timer) return;
      timer = setInterval(
        () => {
          if (executing.size === 0) {
            clearInterval(timer);
            timer = undefined;
            return;
          }
          beat().catch((err: unknown) => logError?.(err));
        },
        Math.max(10, Math.floor(leaseMs / 4)),
      );
      timer.unref?.();
    },
  };
}
