/**
 * @module The statements of a run's lifecycle, one typed function each: a `Db` or a `Tx` in (a `Tx` where
 * the statement only makes sense inside the caller's transaction: a row lock, a write that commits with
 * the caller's), one statement run, decoded values out (camelCase records, numbers, Dates, parsed JSON).
 * The policy files (start.ts, close.ts, recovery.ts, store.ts, steps.ts, idempotency.ts, …) call these
 * and hold no SQL. The closing statement, `finish_run`, is a store function (store/functions/
 * finish_run.sql, finish_runs.sql): here is its call and the decoding of the run it answers.
 */
import type { FunctionArgument, TableRow } from '../../../../../generated/db.ts';
import { functionArgument, type Db, type Tx } from '../../store/db.ts';

/** A row of `runs` as stored (generated/db.ts, from the migrations). */
type RunRow = TableRow<'runs'>;

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
const RUN_COLUMNS =
  'id, status, agent_slug, answered_by, alias, source, conversation_id, request_preview, content, failure_reason, input_tokens, output_tokens, stu, created_at, updated_at, completed_at';

type RunViewRow = Pick<
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

function decodeRunView(row: RunViewRow): RunView {
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

function decodeRun(row: RunRow): RunRecord {
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
export interface FailedAtOnce {
  runId: string;
  workspaceId: string;
  agentSlug: string;
  answeredBy: string;
  alias: string;
  source: string;
  conversationId: string | null;
  requestPreview: string | null;
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

// ---- finish_run ---------------------------------------------------------------------------------

/**
 * One close: `finish_run`'s one argument, a jsonb object with named keys (`finish_run_args`, declared in
 * store/functions/finish_run.sql, typed by generated/db.ts), the run and its workspace always named.
 */
export type FinishRunArgs = FunctionArgument<'finish_run_args'> & { run_id: string; workspace_id: string };

/** The run `finish_run` answers: as it stands after the close (which may have left it alone). */
export type FinishedRun = RunView & Pick<RunRecord, 'startedAt'>;

/**
 * Prepared on PostgreSQL (named): its columns are listed, so a column added to `runs` by a
 * migration (another instance, a rolling deploy) does not change the statement's result type.
 */
const FINISH_RUN = `SELECT ${RUN_COLUMNS}, started_at FROM finish_run($1)`;

/** Closes a run that executed, in one statement (alone, or first in the closing transaction). */
export async function finishRun(db: Db | Tx, close: FinishRunArgs): Promise<FinishedRun> {
  const [row] = await db.query<RunViewRow & Pick<RunRow, 'started_at'>>(FINISH_RUN, [functionArgument(close)], { name: 'finish_run' });
  return { ...decodeRunView(row!), startedAt: row!.started_at };
}

/** Several closes in one `jsonb` array of the same objects (store/functions/finish_runs.sql). */
const FINISH_RUNS = `SELECT ${RUN_COLUMNS}, started_at FROM finish_runs($1)`;

/**
 * Closes several runs in one statement (close-batch.ts), each as `finish_run` would: the runs as they
 * stand after, one row per close, in no particular order (match them by id).
 */
export async function finishRuns(db: Db, closes: readonly FinishRunArgs[]): Promise<FinishedRun[]> {
  const rows = await db.query<RunViewRow & Pick<RunRow, 'started_at'>>(FINISH_RUNS, [functionArgument(closes)], { name: 'finish_runs' });
  return rows.map((row) => ({ ...decodeRunView(row), startedAt: row.started_at }));
}

// ---- steps, tool calls, drafts ------------------------------------------------------------------

/** Inserts a run's steps in one statement, in order. */
export async function insertSteps(
  tx: Tx,
  runId: string,
  now: Date,
  steps: readonly { id: string; index: number; kind: string; agentSlug: string; summary: string }[],
): Promise<void> {
  // One fixed statement for any number of steps: one array parameter per column, unnested in order.
  await tx.query(
    `INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at)
     SELECT s.id, $1, s.index, s.kind, s.agent_slug, s.summary, $2
       FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS s(id, index, kind, agent_slug, summary)`,
    [
      runId,
      now,
      steps.map((step) => step.id),
      steps.map((step) => step.index),
      steps.map((step) => step.kind),
      steps.map((step) => step.agentSlug),
      steps.map((step) => step.summary),
    ],
  );
}

export async function insertToolCall(
  tx: Tx,
  call: { id: string; runId: string; stepIndex: number; name: string; arguments: unknown; result: string | null; status: string; now: Date },
): Promise<void> {
  await tx.query(`INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    call.id,
    call.runId,
    call.stepIndex,
    call.name,
    JSON.stringify(call.arguments),
    call.result,
    call.status,
    call.now,
  ]);
}

export async function insertDraft(
  tx: Tx,
  draft: { id: string; workspaceId: string; runId: string; agentSlug: string; kind: string; subject: string; body: string; now: Date },
): Promise<void> {
  await tx.query(`INSERT INTO drafts (id, workspace_id, run_id, agent_slug, kind, subject, body, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    draft.id,
    draft.workspaceId,
    draft.runId,
    draft.agentSlug,
    draft.kind,
    draft.subject,
    draft.body,
    draft.now,
  ]);
}

/** A run's steps, in order. */
export async function readSteps(
  db: Db | Tx,
  runId: string,
): Promise<{ id: string; index: number; kind: string; agentSlug: string; summary: string; createdAt: Date }[]> {
  const rows = await db.query<Pick<TableRow<'run_steps'>, 'id' | 'index' | 'kind' | 'agent_slug' | 'summary' | 'created_at'>>(
    `SELECT id, index, kind, agent_slug, summary, created_at FROM run_steps WHERE run_id = $1 ORDER BY index`,
    [runId],
  );
  return rows.map((s) => ({ id: s.id, index: s.index, kind: s.kind, agentSlug: s.agent_slug, summary: s.summary, createdAt: s.created_at }));
}

/** A run's tool calls, by step; `arguments` parsed. */
export async function readToolCalls(
  db: Db | Tx,
  runId: string,
): Promise<{ id: string; stepIndex: number; name: string; arguments: unknown; result: string | null; status: string }[]> {
  const rows = await db.query<Pick<TableRow<'tool_calls'>, 'id' | 'step_index' | 'name' | 'arguments' | 'result' | 'status'>>(
    `SELECT id, step_index, name, arguments, result, status FROM tool_calls WHERE run_id = $1 ORDER BY step_index, id`,
    [runId],
  );
  return rows.map((t) => ({
    id: t.id,
    stepIndex: t.step_index,
    name: t.name,
    arguments: typeof t.arguments === 'string' ? JSON.parse(t.arguments) : t.arguments,
    result: t.result,
    status: t.status,
  }));
}

// ---- the runs list ------------------------------------------------------------------------------

/** The filters on a run's class; an absent one is null and matches every run. */
export interface RunClass {
  status: string | null;
  /** The agent addressed or, for a routed run, the department that answered it. */
  agentSlug: string | null;
  alias: string | null;
  source: string | null;
}

/** The filters on a run's class, in `runs` and in `run_counts` alike ($2 … $5). */
const CLASS_MATCHES = `($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR agent_slug = $3 OR answered_by = $3)
    AND ($4::text IS NULL OR alias = $4) AND ($5::text IS NULL OR source = $5)`;

/** Matches a class within a time range ($6, $7: either may be null). */
const RANGE_MATCHES = `workspace_id = $1 AND ${CLASS_MATCHES}
    AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)`;

const classParams = (workspaceId: string, match: RunClass) => [workspaceId, match.status, match.agentSlug, match.alias, match.source];

/**
 * One page of a class of the workspace's runs, newest first, and how many the class has in all, from
 * the counters per class (`run_counts`, kept by triggers on `runs`), in one statement. The counters'
 * row is always there, so a page past the end still carries the total.
 */
export async function pageRunsOfClass(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass,
  page: { limit: number; offset: number },
): Promise<{ runs: RunView[]; total: number }> {
  const rows = await db.query<RunRow & { total: number }>(
    `WITH total AS (SELECT coalesce(sum(runs), 0)::int AS total FROM run_counts WHERE workspace_id = $1 AND ${CLASS_MATCHES}),
          page AS (SELECT * FROM runs WHERE workspace_id = $1 AND ${CLASS_MATCHES} ORDER BY created_at DESC, seq DESC LIMIT $6 OFFSET $7)
     SELECT page.*, total.total FROM total LEFT JOIN page ON true ORDER BY page.created_at DESC, page.seq DESC`,
    [...classParams(workspaceId, match), page.limit, page.offset],
  );
  // A page past the end is the total's row alone, its run columns null.
  const runs = rows.filter((row) => row.id !== null).map(decodeRunView);
  return { runs, total: rows[0]?.total ?? 0 };
}

/**
 * One page of a class of the workspace's runs created in a range, newest first, with the total that
 * match (counted by a window before LIMIT, so it is undefined on a page past the end).
 */
export async function pageRunsInRange(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass & { createdAfter: Date | null; createdBefore: Date | null },
  page: { limit: number; offset: number },
): Promise<{ runs: RunView[]; total: number | undefined }> {
  const rows = await db.query<RunRow & { total: number }>(
    `SELECT *, count(*) OVER ()::int AS total FROM runs WHERE ${RANGE_MATCHES} ORDER BY created_at DESC, seq DESC LIMIT $8 OFFSET $9`,
    [...classParams(workspaceId, match), match.createdAfter, match.createdBefore, page.limit, page.offset],
  );
  return { runs: rows.map(decodeRunView), total: rows[0]?.total };
}

/** How many runs of a class the workspace created in a range. */
export async function countRunsInRange(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass & { createdAfter: Date | null; createdBefore: Date | null },
): Promise<number> {
  const [row] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM runs WHERE ${RANGE_MATCHES}`, [
    ...classParams(workspaceId, match),
    match.createdAfter,
    match.createdBefore,
  ]);
  return row!.total;
}

// ---- idempotency keys ---------------------------------------------------------------------------

/** The claim of an Idempotency-Key, undefined when the key is not claimed. */
export async function readClaim(db: Db | Tx, credentialId: string, key: string): Promise<{ requestHash: string; runId: string; expiresAt: Date } | undefined> {
  const [row] = await db.query<Pick<TableRow<'idempotency_keys'>, 'request_hash' | 'run_id' | 'expires_at'>>(
    `SELECT request_hash, run_id, expires_at FROM idempotency_keys WHERE credential_id = $1 AND idempotency_key = $2`,
    [credentialId, key],
  );
  return row && { requestHash: row.request_hash, runId: row.run_id, expiresAt: row.expires_at };
}

export async function deleteClaim(db: Db | Tx, credentialId: string, key: string): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE credential_id = $1 AND idempotency_key = $2`, [credentialId, key]);
}

/** Claims the key for `runId` until `expiresAt`; false when it is claimed already. */
export async function insertClaim(
  tx: Tx,
  claim: { credentialId: string; key: string; workspaceId: string; requestHash: string; runId: string; now: Date; expiresAt: Date },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO idempotency_keys (credential_id, idempotency_key, workspace_id, request_hash, run_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (credential_id, idempotency_key) DO NOTHING RETURNING 1`,
    [claim.credentialId, claim.key, claim.workspaceId, claim.requestHash, claim.runId, claim.now, claim.expiresAt],
  );
  return rows.length > 0;
}

// ---- conversations ------------------------------------------------------------------------------

/** The `limit` most recent turns of a conversation, oldest first. */
export async function recentTurns(
  db: Db | Tx,
  workspaceId: string,
  conversationId: string,
  limit: number,
): Promise<{ role: string; content: string; seq: number }[]> {
  return db.query<Pick<TableRow<'conversation_turns'>, 'role' | 'content' | 'seq'>>(
    `SELECT role, content, seq FROM (
       SELECT role, content, seq FROM conversation_turns
        WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY seq DESC LIMIT $3
     ) recent ORDER BY seq`,
    [workspaceId, conversationId, limit],
  );
}

// ---- the run's event log --------------------------------------------------------------------------

/** The run and what its execution stored of its event log (null: nothing stored, yet or ever); the log's own statements are run-events/queries.ts's. */
export async function readRunLog(
  db: Db,
  workspaceId: string,
  runId: string,
): Promise<{ record: RunRecord; stored: unknown[] | null; lastSequence: number | null } | undefined> {
  const [row] = await db.query<RunRow & { log_events: unknown[] | null; log_last: number | null }>(
    `SELECT r.*, e.events AS log_events, e.last_sequence AS log_last FROM runs r LEFT JOIN run_events e ON e.run_id = r.id
      WHERE r.id = $1 AND r.workspace_id = $2`,
    [runId, workspaceId],
  );
  return row && { record: decodeRun(row), stored: row.log_events, lastSequence: row.log_last };
}
