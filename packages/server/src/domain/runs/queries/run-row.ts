/**
 * @module The row of a run (`runs`) decoded, and the statements on it alone: read, lock, the rows written outside the
 * closing statement, the executions' leases.
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { TableRow } from '../../../../../../generated/db.ts';
import type { Db, Tx } from '../../../store/db.ts';

/** A row of `runs` as stored (generated/db.ts, from the migrations). */
export type RunRow = TableRow<'runs'>;

/** A run's row, decoded. */
export interface RunRecord {
  id: string;
  workspaceId: string;
  /** As stored; `toRun` parses it with the contract's enum. */
  status: string;
  agentSlug: string;
  answeredBy: string;
  alias: string;
  source: string;
  conversationId: string | null;
  /** The start of the request (domain/runs/request-preview.ts); null before migration 0516. */
  requestPreview: string | null;
  content: string | null;
  failureReason: string | null;
  inputTokens: number;
  outputTokens: number;
  stu: number;
  /** What the run holds of the period's and the windows' budgets while it is in progress. */
  reservedStu: number;
  windowHour: Date;
  windowDay: Date;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** When its current execution began (null: not adopted yet, or handed over again). */
  startedAt: Date | null;
  leaseUntil: Date | null;
  recoveries: number;
}

/** What a Run (the contract's) is made of: the columns `RUN_COLUMNS` lists. */
export type RunView = Pick<
  RunRecord,
  | 'id'
  | 'status'
  | 'agentSlug'
  | 'answeredBy'
  | 'alias'
  | 'source'
  | 'conversationId'
  | 'requestPreview'
  | 'content'
  | 'failureReason'
  | 'inputTokens'
  | 'outputTokens'
  | 'stu'
  | 'createdAt'
  | 'updatedAt'
  | 'completedAt'
>;

/** The columns of `RunView`, for a statement whose result type must not change when `runs` gains a column (a prepared one). */
export const RUN_COLUMNS =
  'id, status, agent_slug, answered_by, alias, source, conversation_id, request_preview, content, failure_reason, input_tokens, output_tokens, stu, created_at, updated_at, completed_at';

export type RunViewRow = Pick<
  RunRow,
  | 'id'
  | 'status'
  | 'agent_slug'
  | 'answered_by'
  | 'alias'
  | 'source'
  | 'conversation_id'
  | 'request_preview'
  | 'content'
  | 'failure_reason'
  | 'input_tokens'
  | 'output_tokens'
  | 'stu'
  | 'created_at'
  | 'updated_at'
  | 'completed_at'
>;

export function decodeRunView(row: RunViewRow): RunView {
  return {
    id: row.id,
    status: row.status,
    agentSlug: row.agent_slug,
    answeredBy: row.answered_by,
    alias: row.alias,
    source: row.source,
    conversationId: row.conversation_id,
    requestPreview: row.request_preview,
    content: row.content,
    failureReason: row.failure_reason,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    stu: Number(row.stu),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
  };
}

export function decodeRun(row: RunRow): RunRecord {
  return {
    ...decodeRunView(row),
    workspaceId: row.workspace_id,
    reservedStu: Number(row.reserved_stu),
    windowHour: row.window_hour,
    windowDay: row.window_day,
    startedAt: row.started_at,
    leaseUntil: row.lease_until,
    recoveries: row.recoveries,
  };
}

// ---- a run's row --------------------------------------------------------------------------------

/** The run, undefined when it does not exist in this workspace. */
export async function readRun(db: Db | Tx, workspaceId: string, runId: string): Promise<RunRecord | undefined> {
  const [row] = await db.query<RunRow>(`SELECT * FROM runs WHERE id = $1 AND workspace_id = $2`, [runId, workspaceId]);
  return row && decodeRun(row);
}

/** The run, locked until the transaction ends; undefined when it does not exist in this workspace. */
export async function lockRun(tx: Tx, workspaceId: string, runId: string): Promise<RunRecord | undefined> {
  const [row] = await tx.query<RunRow>(`SELECT * FROM runs WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [runId, workspaceId]);
  return row && decodeRun(row);
}

/** A run that ends before the engine is called, as `start_runs` would have inserted it but `failed` with `reason`; nothing reserved. */
export interface FailedAtOnce extends Pick<RunRecord, 'workspaceId' | 'agentSlug' | 'answeredBy' | 'alias' | 'source' | 'conversationId' | 'requestPreview'> {
  runId: string;
  reason: string;
  windows: { hour: Date; day: Date };
  now: Date;
}

/** Inserts the run `failed` at once. */
export async function insertFailedRun(tx: Tx, run: FailedAtOnce): Promise<void> {
  await tx.query(
    `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, conversation_id, failure_reason,
                       reserved_stu, window_hour, window_day, created_at, updated_at, started_at, completed_at, request_preview)
     VALUES ($1, $2, 'failed', $3, $4, $5, $6, $7, $8, 0, $9, $10, $11, $11, $11, $11, $12)`,
    [
      run.runId,
      run.workspaceId,
      run.agentSlug,
      run.answeredBy,
      run.alias,
      run.source,
      run.conversationId,
      run.reason,
      run.windows.hour,
      run.windows.day,
      run.now,
      run.requestPreview,
    ],
  );
}

/**
 * Routes the run executing since `startedAt` to `answeredBy` (the department the orchestrator just handed a part to),
 * so that it says so while it runs; nothing when the run is no longer that execution's (canceled, swept, handed over).
 */
export async function routeExecutingRun(
  db: Db | Tx,
  run: { runId: string; workspaceId: string; startedAt: Date },
  answeredBy: string,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE runs SET answered_by = $4, updated_at = $5
      WHERE id = $1 AND workspace_id = $2 AND status = 'in_progress' AND started_at = $3 AND answered_by <> $4`,
    [run.runId, run.workspaceId, run.startedAt, answeredBy, now],
  );
}

/** Fails at once the inbound run to adopt, if it is still waiting (not started); false when it is not. */
export async function failWaitingRunAtOnce(
  tx: Tx,
  run: Pick<FailedAtOnce, 'runId' | 'workspaceId' | 'answeredBy' | 'requestPreview' | 'reason' | 'windows' | 'now'>,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE runs SET answered_by = $3, status = 'failed', failure_reason = $4, reserved_stu = 0, window_hour = $5, window_day = $6,
                     updated_at = $7, started_at = $7, completed_at = $7, lease_until = NULL, request_preview = $8
      WHERE id = $1 AND workspace_id = $2 AND status = 'in_progress' AND started_at IS NULL RETURNING 1`,
    [run.runId, run.workspaceId, run.answeredBy, run.reason, run.windows.hour, run.windows.day, run.now, run.requestPreview],
  );
  return rows.length > 0;
}

/** Fails an inbound run that was refused before it started (keeps its windows); false when it is no longer waiting. */
export async function failRefusedRun(tx: Tx, run: { runId: string; workspaceId: string; reason: string; now: Date }): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE runs SET status = 'failed', failure_reason = $3, updated_at = $4, completed_at = $4
      WHERE id = $1 AND workspace_id = $2 AND status = 'in_progress' AND started_at IS NULL RETURNING 1`,
    [run.runId, run.workspaceId, run.reason, run.now],
  );
  return rows.length > 0;
}

/**
 * Ends a run outside its execution: `status` (failed or canceled) with `reason`, holding nothing. A
 * failed run's lease is dropped; a canceled one keeps it, since its execution, if any still runs,
 * closes it and stores its event log (run-events/reader.ts waits for that until the lease ends).
 */
export async function endRunRow(tx: Tx, runId: string, outcome: { status: 'failed' | 'canceled'; reason: string | null; now: Date }): Promise<void> {
  await tx.query(
    `UPDATE runs SET status = $2, failure_reason = $3, reserved_stu = 0, lease_until = CASE WHEN $2 = 'canceled' THEN lease_until END,
                     updated_at = $4, completed_at = $4 WHERE id = $1`,
    [runId, outcome.status, outcome.reason, outcome.now],
  );
}

/** Puts an interrupted run back to waiting (not started, holding nothing), counting the recovery. */
export async function resetForHandOver(tx: Tx, runId: string, now: Date): Promise<void> {
  await tx.query(`UPDATE runs SET started_at = NULL, lease_until = NULL, reserved_stu = 0, recoveries = recoveries + 1, updated_at = $2 WHERE id = $1`, [
    runId,
    now,
  ]);
}

// ---- leases -------------------------------------------------------------------------------------

/** Renews the lease of the runs still in progress among `runIds` (not one paused for an approval: it holds none); answers their ids. */
export async function renewLeases(db: Db | Tx, runIds: readonly string[], until: Date): Promise<string[]> {
  const rows = await db.query<Pick<RunRow, 'id'>>(
    `UPDATE runs SET lease_until = $2 WHERE id = ANY ($1::text[]) AND status = 'in_progress' AND started_at IS NOT NULL RETURNING id`,
    [runIds, until],
  );
  return rows.map((row) => row.id);
}

/** Up to `limit` started runs in progress whose lease ran out (or was never set), the longest expired first. */
export async function expiredLeases(db: Db | Tx, now: Date, limit: number): Promise<string[]> {
  const rows = await db.query<Pick<RunRow, 'id'>>(
    `SELECT id FROM runs WHERE status = 'in_progress' AND started_at IS NOT NULL AND (lease_until IS NULL OR lease_until <= $1)
      ORDER BY lease_until NULLS FIRST LIMIT $2`,
    [now, limit],
  );
  return rows.map((row) => row.id);
}

/** The run, locked, if its lease still ran out (its instance may have renewed or ended it meanwhile); skipped when another sweeper holds it. */
export async function lockExpiredRun(tx: Tx, runId: string, now: Date): Promise<RunRecord | undefined> {
  const [row] = await tx.query<RunRow>(
    `SELECT * FROM runs WHERE id = $1 AND status = 'in_progress' AND started_at IS NOT NULL
        AND (lease_until IS NULL OR lease_until <= $2) FOR UPDATE SKIP LOCKED`,
    [runId, now],
  );
  return row && decodeRun(row);
}
