/**
 * @module Run records in the store and their contract shapes (Run, Step, ToolCall, RunList).
 * Every read is scoped by workspace: another workspace's run reads exactly like a missing one.
 */
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { zRun, zRunStatus, zStep, zToolCall, type Schema } from '../../contract.ts';
import { toAlias } from '../../vocabulary/alias.ts';

type RunStatus = Schema<'RunStatus'>;
export type Run = Schema<'Run'>;
export type RunSource = Run['source'];
export type Step = Schema<'Step'>;
export type ToolCall = Schema<'ToolCall'>;
export type RunDetail = Schema<'RunDetail'>;
export type RunList = Schema<'RunList'>;

/** A row of `runs` as stored (generated/db.ts, from the migrations). */
export type RunRow = TableRow<'runs'>;

/** The columns a Run is made of (`RUN_COLUMNS`). */
export type RunFields = Pick<
  RunRow,
  | 'id'
  | 'status'
  | 'agent_slug'
  | 'answered_by'
  | 'alias'
  | 'source'
  | 'conversation_id'
  | 'content'
  | 'failure_reason'
  | 'input_tokens'
  | 'output_tokens'
  | 'stu'
  | 'created_at'
  | 'updated_at'
  | 'completed_at'
>;

/** The columns of `RunFields`, for a statement whose result type must not change when `runs` gains a column (a prepared one). */
export const RUN_COLUMNS =
  'id, status, agent_slug, answered_by, alias, source, conversation_id, content, failure_reason, input_tokens, output_tokens, stu, created_at, updated_at, completed_at';

export function toRun(row: RunFields): Run {
  return {
    id: row.id,
    status: zRunStatus.parse(row.status),
    agentSlug: row.agent_slug,
    // Only the orchestrator hands a run to another agent: the one that answered, when not the one addressed.
    routedTo: row.answered_by !== row.agent_slug ? row.answered_by : null,
    alias: toAlias(row.alias),
    source: zRun.shape.source.parse(row.source),
    conversationId: row.conversation_id,
    content: row.content,
    failureReason: row.failure_reason,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens, stu: row.stu },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/**
 * The run row of an inbound webhook's first delivery, `in_progress`, written in the ingestion's
 * transaction. Executing it is the run executor's job (see `src/worker/inbound-runs.ts`), which picks
 * up the event while `run_started_at` is null.
 */
export async function insertInboundRun(tx: Tx, input: { runId: string; workspaceId: string; agentSlug: string; alias: string; at: Date }): Promise<void> {
  await tx.query(
    `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at,
       window_hour, window_day)
     VALUES ($1, $2, 'in_progress', $3, $3, $4, 'inbound_webhook', $5, $5,
       date_trunc('hour', $5::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
       date_trunc('day', $5::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`,
    [input.runId, input.workspaceId, input.agentSlug, input.alias, input.at],
  );
}

/** The run row, or `404 not_found` when it does not exist in this workspace. */
export async function readRunRow(db: Db | Tx, workspaceId: string, runId: string, forUpdate = false): Promise<RunRow> {
  const [row] = await db.query<RunRow>(`SELECT * FROM runs WHERE id = $1 AND workspace_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [runId, workspaceId]);
  if (!row) throw fail('not_found', 'Run not found.');
  return row;
}

export async function readRunDetail(db: Db, workspaceId: string, runId: string): Promise<RunDetail> {
  const row = await readRunRow(db, workspaceId, runId);
  const steps = await db.query<Pick<TableRow<'run_steps'>, 'id' | 'index' | 'kind' | 'agent_slug' | 'summary' | 'created_at'>>(
    `SELECT id, index, kind, agent_slug, summary, created_at FROM run_steps WHERE run_id = $1 ORDER BY index`,
    [runId],
  );
  const calls = await db.query<Pick<TableRow<'tool_calls'>, 'id' | 'step_index' | 'name' | 'arguments' | 'result' | 'status'>>(
    `SELECT id, step_index, name, arguments, result, status FROM tool_calls WHERE run_id = $1 ORDER BY step_index, id`,
    [runId],
  );
  return {
    run: toRun(row),
    steps: steps.map((s) => ({
      id: s.id,
      index: s.index,
      kind: zStep.shape.kind.parse(s.kind),
      agentSlug: s.agent_slug,
      summary: s.summary,
      createdAt: s.created_at.toISOString(),
    })),
    toolCalls: calls.map((t) => ({
      id: t.id,
      stepIndex: t.step_index,
      name: t.name,
      arguments: zToolCall.shape.arguments.parse(typeof t.arguments === 'string' ? JSON.parse(t.arguments) : t.arguments),
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

/** The filters on a run's class, in `runs` and in `run_counts` alike ($2 … $5). */
const CLASS_MATCHES = `($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR agent_slug = $3 OR answered_by = $3)
    AND ($4::text IS NULL OR alias = $4) AND ($5::text IS NULL OR source = $5)`;

/**
 * One page of the workspace's runs, newest first, with the total that match the filters, in one
 * statement. The agent filter matches the agent addressed or, for a routed run, the department
 * that answered it; a filter that is not given is NULL and matches every run.
 *
 * Without a time range the total is a sum over the workspace's counters per class (`run_counts`,
 * kept by triggers on `runs`: migration 0505), so it costs the same for a million runs as for a
 * hundred; the page comes from the `(workspace_id, created_at, seq)` index. The counters' row is
 * always there, so a page past the end still carries the total. A list bounded by `createdAfter`
 * or `createdBefore` counts the runs in its range instead.
 */
export async function listRunRows(db: Db, workspaceId: string, filters: RunFilters): Promise<RunList> {
  const classParams = [workspaceId, filters.status ?? null, filters.agentSlug ?? null, filters.alias ?? null, filters.source ?? null];
  if (!filters.createdAfter && !filters.createdBefore) {
    const rows = await db.query<RunRow & { total: number }>(
      `WITH total AS (SELECT coalesce(sum(runs), 0)::int AS total FROM run_counts WHERE workspace_id = $1 AND ${CLASS_MATCHES}),
            page AS (SELECT * FROM runs WHERE workspace_id = $1 AND ${CLASS_MATCHES} ORDER BY created_at DESC, seq DESC LIMIT $6 OFFSET $7)
       SELECT page.*, total.total FROM total LEFT JOIN page ON true ORDER BY page.created_at DESC, page.seq DESC`,
      [...classParams, filters.limit, filters.offset],
    );
    const total = rows[0]?.total ?? 0;
    return { data: rows.filter((row) => row.id !== null).map(toRun), total, limit: filters.limit, offset: filters.offset };
  }
  const matches = `workspace_id = $1 AND ${CLASS_MATCHES}
    AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)`;
  const params = [...classParams, filters.createdAfter ?? null, filters.createdBefore ?? null];
  // The page and the total in one statement (the window counts every match before LIMIT); a page
  // past the end has no row to carry the total, so only then is it counted apart.
  const rows = await db.query<RunRow & { total: number }>(
    `SELECT *, count(*) OVER ()::int AS total FROM runs WHERE ${matches} ORDER BY created_at DESC, seq DESC LIMIT $8 OFFSET $9`,
    [...params, filters.limit, filters.offset],
  );
  const total =
    rows[0]?.total ??
    (filters.offset > 0 ? (await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM runs WHERE ${matches}`, params))[0]!.total : 0);
  return { data: rows.map(toRun), total, limit: filters.limit, offset: filters.offset };
}
