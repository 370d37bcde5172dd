/**
 * @module Run records and their contract shapes (Run, Step, ToolCall, RunList).
 * Every read is scoped by workspace: another workspace's run reads exactly like a missing one.
 */
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { zRun, zRunStatus, zStep, zToolCall, type Schema } from '../../contract.ts';
import { toAlias } from '../../vocabulary/alias.ts';
import { readWaitingFor, type WaitingApproval } from './checkpoints.ts';
import { countRunsInRange, pageRunsInRange, pageRunsOfClass } from './queries/list.ts';
import { lockRun, readRun, type RunRecord, type RunView } from './queries/run-row.ts';
import { readSteps, readToolCalls } from './queries/steps.ts';

export type { RunRecord, RunView } from './queries/run-row.ts';

type RunStatus = Schema<'RunStatus'>;
export type Run = Schema<'Run'>;
export type RunSource = Run['source'];

/** A stored source read back (the contract's enum; another value means the store is damaged). */
export function toRunSource(value: string): RunSource {
  return zRun.shape.source.parse(value);
}
export type Step = Schema<'Step'>;
export type ToolCall = Schema<'ToolCall'>;
export type RunDetail = Schema<'RunDetail'>;
export type RunList = Schema<'RunList'>;

/** The contract's Run; with `waiting`, the approval it waits for (`waitingFor`). */
export function toRun(run: RunView, waiting?: WaitingApproval): Run {
  const shown: Run = {
    id: run.id,
    status: zRunStatus.parse(run.status),
    agentSlug: run.agentSlug,
    // Only the orchestrator hands a run to another agent: the one that answered, when not the one addressed.
    routedTo: run.answeredBy !== run.agentSlug ? run.answeredBy : null,
    alias: toAlias(run.alias),
    source: toRunSource(run.source),
    conversationId: run.conversationId,
    requestPreview: run.requestPreview,
    content: run.content,
    failureReason: run.failureReason,
    usage: { inputTokens: run.inputTokens, outputTokens: run.outputTokens, stu: run.stu },
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    completedAt: run.completedAt ? run.completedAt.toISOString() : null,
  };
  return waiting ? { ...shown, waitingFor: { ...waiting, expiresAt: waiting.expiresAt.toISOString() } } : shown;
}

/** The run, or `404 not_found` when it does not exist in this workspace. */
export async function readRunRecord(db: Db | Tx, workspaceId: string, runId: string): Promise<RunRecord> {
  return found(await readRun(db, workspaceId, runId));
}

/** The run, locked until the transaction ends, or `404 not_found` when it does not exist in this workspace. */
export async function lockRunRecord(tx: Tx, workspaceId: string, runId: string): Promise<RunRecord> {
  return found(await lockRun(tx, workspaceId, runId));
}

function found(run: RunRecord | undefined): RunRecord {
  if (!run) throw fail('not_found', 'Run not found.');
  return run;
}

export async function readRunDetail(db: Db, workspaceId: string, runId: string): Promise<RunDetail> {
  const run = await readRunRecord(db, workspaceId, runId);
  const steps = await readSteps(db, runId);
  const calls = await readToolCalls(db, runId);
  // A run that waits for an approval says which (pause.ts): until its resume is claimed.
  const waiting = run.status === 'in_progress' && run.startedAt === null ? await readWaitingFor(db, workspaceId, runId) : undefined;
  return {
    run: toRun(run, waiting),
    steps: steps.map((s) => ({
      id: s.id,
      index: s.index,
      kind: zStep.shape.kind.parse(s.kind),
      agentSlug: s.agentSlug,
      summary: s.summary,
      createdAt: s.createdAt.toISOString(),
    })),
    toolCalls: calls.map((t) => ({
      id: t.id,
      stepIndex: t.stepIndex,
      name: t.name,
      arguments: zToolCall.shape.arguments.parse(t.arguments),
      result: t.result,
      status: zToolCall.shape.status.parse(t.status),
    })),
  };
}

export interface RunFilters {
  status?: RunStatus | undefined;
  agentSlug?: string | undefined;
  alias?: string | undefined;
  source?: string | undefined;
  /** Created at or after (inclusive). */
  createdAfter?: Date | undefined;
  /** Created before (exclusive). */
  createdBefore?: Date | undefined;
  limit: number;
  offset: number;
}

/**
 * One page of the workspace's runs, newest first, with the total that match the filters, in one
 * statement. The agent filter matches the agent addressed or, for a routed run, the department
 * that answered it; a filter that is not given matches every run.
 *
 * Without a time range the total is a sum over the workspace's counters per class (`run_counts`,
 * kept per statement by triggers on `runs`: store/functions/run_counts.sql), so it costs the same for a million runs as for a
 * hundred; the page comes from the `(workspace_id, created_at, seq)` index. A list bounded by
 * `createdAfter` or `createdBefore` counts the runs in its range instead. A run of the page that waits for an
 * approval carries it (`waitingFor`), read by the same statement.
 */
export async function listRunRows(db: Db, workspaceId: string, filters: RunFilters): Promise<RunList> {
  const match = { status: filters.status ?? null, agentSlug: filters.agentSlug ?? null, alias: filters.alias ?? null, source: filters.source ?? null };
  const page = { limit: filters.limit, offset: filters.offset };
  if (!filters.createdAfter && !filters.createdBefore) {
    const { runs, total } = await pageRunsOfClass(db, workspaceId, match, page);
    return { data: runs.map(({ run, waitingFor }) => toRun(run, waitingFor)), total, limit: filters.limit, offset: filters.offset };
  }
  const inRange = { ...match, createdAfter: filters.createdAfter ?? null, createdBefore: filters.createdBefore ?? null };
  const { runs, total } = await pageRunsInRange(db, workspaceId, inRange, page);
  // A page past the end has no row to carry the total: only then is it counted apart.
  const all = total ?? (filters.offset > 0 ? await countRunsInRange(db, workspaceId, inRange) : 0);
  return { data: runs.map(({ run, waitingFor }) => toRun(run, waitingFor)), total: all, limit: filters.limit, offset: filters.offset };
}
