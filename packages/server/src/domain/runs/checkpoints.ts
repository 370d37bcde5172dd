/**
 * @module The statements of `run_checkpoints` (store/migrations/0550_run_checkpoints.sql): where a run that waits
 * for an approval stopped, and the state of the one tool call it waits to make. pause.ts writes a checkpoint,
 * resume.ts claims it (one `UPDATE … WHERE claimed_at IS NULL … RETURNING`: whichever instance gets the row resumes
 * the run, the others get nothing) and moves its call along: `pending_approval` → `approved` | `rejected` |
 * `expired` (the claim) → `calling` (before the tool is called) → `completed` | `failed`, or `unknown` when the
 * instance stopped during the call (recovery.ts). A run that ends before its checkpoint is claimed (canceled while
 * it waits) loses the checkpoint in the transaction that ends it (recovery.ts).
 */
import type { TableRow } from '../../../../../generated/db.ts';
import type { Db, Tx } from '../../store/db.ts';
import { columnsOf, date, int, json, nullable, oneOf, row, selectRow, selectRows, text } from '../../store/rows.ts';

export type CallStatus = TableRow<'run_checkpoints'>['call_status'];

const CALL_STATUSES = ['pending_approval', 'approved', 'rejected', 'expired', 'calling', 'completed', 'failed', 'unknown'] as const;

const checkpointColumns = columnsOf('run_checkpoints', {
  id: text,
  run_id: text,
  workspace_id: text,
  approval_id: text,
  loop_state: json,
  call_id: text,
  call_name: text,
  call_arguments: json,
  call_status: oneOf(CALL_STATUSES),
  call_result: nullable(text),
  next_input_tokens: int,
  next_output_tokens: int,
  last_sequence: int,
  created_at: date,
  claimed_at: nullable(date),
  claimed_by: nullable(text),
  resumed_at: nullable(date),
  updated_at: date,
});
const checkpointRow = row(checkpointColumns);

/** A run's checkpoint as the domain reads it. */
export interface Checkpoint {
  id: string;
  runId: string;
  workspaceId: string;
  approvalId: string;
  /** The agent loop's state, as the loop gave it to the pause. */
  loopState: unknown;
  /** The tool call the run waits to make. */
  call: { id: string; name: string; arguments: Record<string, unknown>; status: CallStatus; result: string | null };
  /** What the resume reserves: the next model call's input estimate and output cap. */
  next: { inputTokens: number; desiredOutput: number };
  /** The last sequence of the run's event log stored at the pause. */
  lastSequence: number;
  createdAt: Date;
  claimedAt: Date | null;
  claimedBy: string | null;
  resumedAt: Date | null;
}

function toCheckpoint(r: ReturnType<typeof checkpointRow>): Checkpoint {
  return {
    id: r.id,
    runId: r.run_id,
    workspaceId: r.workspace_id,
    approvalId: r.approval_id,
    loopState: r.loop_state,
    call: { id: r.call_id, name: r.call_name, arguments: r.call_arguments as Record<string, unknown>, status: r.call_status, result: r.call_result },
    next: { inputTokens: r.next_input_tokens, desiredOutput: r.next_output_tokens },
    lastSequence: r.last_sequence,
    createdAt: r.created_at,
    claimedAt: r.claimed_at,
    claimedBy: r.claimed_by,
    resumedAt: r.resumed_at,
  };
}

export async function insertCheckpoint(
  tx: Tx,
  c: {
    id: string;
    runId: string;
    workspaceId: string;
    approvalId: string;
    loopState: unknown;
    call: { id: string; name: string; arguments: Record<string, unknown> };
    next: { inputTokens: number; desiredOutput: number };
    lastSequence: number;
    now: Date;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO run_checkpoints (id, run_id, workspace_id, approval_id, loop_state, call_id, call_name, call_arguments,
                                  next_input_tokens, next_output_tokens, last_sequence, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9, $10, $11, $12, $12)`,
    [
      c.id,
      c.runId,
      c.workspaceId,
      c.approvalId,
      JSON.stringify(c.loopState),
      c.call.id,
      c.call.name,
      JSON.stringify(c.call.arguments),
      c.next.inputTokens,
      c.next.desiredOutput,
      c.lastSequence,
      c.now,
    ],
  );
}

/**
 * Claims one resumable checkpoint (or `checkpointId`'s, when it is resumable): its approval decided, or past its
 * expiry at `now`, its run still `in_progress`, nobody's claim on it. One statement; two instances never get the
 * same row (the inner row lock skips a row another claim holds, and `claimed_at IS NULL` is checked again on it).
 * The call's status becomes the decision's (`expired` for an approval still pending past its expiry); a call
 * recovery made `unknown` keeps it. Answers the checkpoint with the approval's status as the claim saw it.
 */
export async function claimCheckpoint(
  tx: Tx,
  input: { now: Date; instance: string; checkpointId?: string | undefined },
): Promise<(Checkpoint & { decision: 'approved' | 'rejected' | 'expired'; decidedBy: string | null }) | undefined> {
  const claimed = await selectRow(
    tx,
    row({ ...checkpointColumns, decision: oneOf(['approved', 'rejected', 'expired'] as const), decided_by: nullable(text) }),
    `WITH due AS (
       SELECT c.id, CASE WHEN a.status = 'pending' THEN 'expired' ELSE a.status END AS decision, a.decided_by
         FROM run_checkpoints c JOIN approvals a ON a.id = c.approval_id JOIN runs r ON r.id = c.run_id
        WHERE c.claimed_at IS NULL AND ($3::text IS NULL OR c.id = $3)
          AND (a.status <> 'pending' OR a.expires_at <= $1) AND r.status = 'in_progress'
        ORDER BY c.created_at, c.id LIMIT 1
          FOR UPDATE OF c SKIP LOCKED
     )
     UPDATE run_checkpoints c SET claimed_at = $1, claimed_by = $2, updated_at = $1,
            call_status = CASE WHEN c.call_status = 'pending_approval' THEN due.decision ELSE c.call_status END
       FROM due WHERE c.id = due.id AND c.claimed_at IS NULL
     RETURNING c.*, due.decision, due.decided_by`,
    [input.now, input.instance, input.checkpointId ?? null],
  );
  if (!claimed) return undefined;
  const { decision, decided_by, ...rest } = claimed;
  return { ...toCheckpoint(rest), decision, decidedBy: decided_by };
}

/** The claim's resume took its reservation: the checkpoint is resumed. */
export async function markResumed(db: Db | Tx, checkpointId: string, now: Date): Promise<void> {
  await db.query(`UPDATE run_checkpoints SET resumed_at = $2, updated_at = $2 WHERE id = $1`, [checkpointId, now]);
}

/** Gives a claim back (its resume could not reserve yet, or its instance stopped before it did): claimable again. */
export async function releaseClaim(db: Db | Tx, checkpointId: string, now: Date): Promise<void> {
  await db.query(`UPDATE run_checkpoints SET claimed_at = NULL, claimed_by = NULL, updated_at = $2 WHERE id = $1 AND resumed_at IS NULL`, [checkpointId, now]);
}

/**
 * Gives back the claims taken before `before` that never reached their resume (the instance stopped between the
 * claim and the reservation), while their run still waits (`started_at IS NULL`). Answers how many.
 */
export async function releaseStaleClaims(db: Db, before: Date, now: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE run_checkpoints c SET claimed_at = NULL, claimed_by = NULL, updated_at = $2
       FROM runs r
      WHERE r.id = c.run_id AND c.claimed_at IS NOT NULL AND c.claimed_at <= $1 AND c.resumed_at IS NULL
        AND r.status = 'in_progress' AND r.started_at IS NULL
     RETURNING c.id`,
    [before, now],
  );
  return rows.length;
}

/**
 * Moves the call from `from` to `to` (answers false when it was not in `from`: the transition was made already,
 * or recovery made it `unknown`). `result` (redacted) is kept with a call that ended.
 */
export async function moveCall(db: Db | Tx, checkpointId: string, from: CallStatus, to: CallStatus, now: Date, result: string | null = null): Promise<boolean> {
  const rows = await db.query(
    `UPDATE run_checkpoints SET call_status = $3, call_result = COALESCE($4, call_result), updated_at = $5
      WHERE id = $1 AND call_status = $2 RETURNING id`,
    [checkpointId, from, to, result, now],
  );
  return rows.length > 0;
}

/** The run's latest checkpoint, locked (the sweeper, which locked the run's row first). */
export async function lockLatestCheckpoint(tx: Tx, runId: string): Promise<Checkpoint | undefined> {
  const found = await selectRow(tx, checkpointRow, `SELECT * FROM run_checkpoints WHERE run_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1 FOR UPDATE`, [
    runId,
  ]);
  return found && toCheckpoint(found);
}

/**
 * A checkpoint whose resumed execution stopped (its instance died): claimable again, with a call that was
 * `calling` recorded `unknown` (it is never called again).
 */
export async function reopenCheckpoint(tx: Tx, checkpointId: string, now: Date): Promise<void> {
  await tx.query(
    `UPDATE run_checkpoints SET claimed_at = NULL, claimed_by = NULL, resumed_at = NULL, updated_at = $2,
            call_status = CASE WHEN call_status = 'calling' THEN 'unknown' ELSE call_status END
      WHERE id = $1`,
    [checkpointId, now],
  );
}

/**
 * The run ended while it waited (recovery.ts: a cancel, or any end outside its execution): its checkpoint not
 * claimed yet is dropped, so no instance ever claims it. Answers the approvals those checkpoints waited for. A
 * claimed checkpoint is its resume's: the claim took the decision (or the expiry) already, and its adoption of
 * the ended run finds it gone.
 */
export async function dropUnclaimedCheckpoints(tx: Tx, runId: string): Promise<string[]> {
  const rows = await tx.query<{ approval_id: string }>(`DELETE FROM run_checkpoints WHERE run_id = $1 AND claimed_at IS NULL RETURNING approval_id`, [runId]);
  return rows.map((r) => r.approval_id);
}

/** The checkpoint by id, in its workspace. */
export async function readCheckpoint(db: Db | Tx, workspaceId: string, checkpointId: string): Promise<Checkpoint | undefined> {
  const found = await selectRow(db, checkpointRow, `SELECT * FROM run_checkpoints WHERE id = $1 AND workspace_id = $2`, [checkpointId, workspaceId]);
  return found && toCheckpoint(found);
}

/** The approval a run waits for, as a run read alone and the runs list show it (`waitingFor`). */
export interface WaitingApproval {
  id: string;
  action: string;
  summary: string;
  expiresAt: Date;
}

/**
 * The statement (a subquery) of the approval the run `runId` of `workspaceId` (SQL expressions) waits for: its latest
 * checkpoint not claimed yet (claimed: its resume took the decision). At most one row: `waiting_id`,
 * `waiting_action`, `waiting_summary`, `waiting_expires_at`.
 */
export function waitingForSql(runId: string, workspaceId: string): string {
  return `SELECT a.id AS waiting_id, a.action AS waiting_action, a.summary AS waiting_summary, a.expires_at AS waiting_expires_at
            FROM run_checkpoints c JOIN approvals a ON a.id = c.approval_id
           WHERE c.run_id = ${runId} AND c.workspace_id = ${workspaceId} AND c.claimed_at IS NULL ORDER BY c.created_at DESC LIMIT 1`;
}

/** The columns of `waitingForSql`, all null when the run waits for nothing. */
export interface WaitingForColumns {
  waiting_id: string | null;
  waiting_action: string | null;
  waiting_summary: string | null;
  waiting_expires_at: Date | null;
}

export function decodeWaitingFor(found: WaitingForColumns): WaitingApproval | undefined {
  if (found.waiting_id === null) return undefined;
  return { id: found.waiting_id, action: found.waiting_action!, summary: found.waiting_summary!, expiresAt: found.waiting_expires_at! };
}

/** The approval a run waits for (its checkpoint not claimed yet), as GET /runs/{id} shows it. */
export async function readWaitingFor(db: Db | Tx, workspaceId: string, runId: string): Promise<WaitingApproval | undefined> {
  const [found] = await selectRows(
    db,
    row({ waiting_id: text, waiting_action: text, waiting_summary: text, waiting_expires_at: date }),
    waitingForSql('$1', '$2'),
    [runId, workspaceId],
  );
  return found && decodeWaitingFor(found);
}

/**
 * The paused run's row: what the pause charged added to its usage, its reservation given back, no lease, not
 * started (so the sweeper leaves it alone and the resume adopts it through start_runs, as a hand-over does), and
 * who answered so far (a run the orchestrator delegates: the last department it consulted).
 */
export async function pauseRunRow(
  tx: Tx,
  runId: string,
  charged: { inputTokens: number; outputTokens: number; stu: number; now: Date; answeredBy: string },
): Promise<void> {
  await tx.query(
    `UPDATE runs SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3, stu = stu + $4,
                     reserved_stu = 0, lease_until = NULL, started_at = NULL, updated_at = $5, answered_by = $6
      WHERE id = $1`,
    [runId, charged.inputTokens, charged.outputTokens, charged.stu, charged.now, charged.answeredBy],
  );
}

/** How many turns the conversation has in the store (what the resume's adoption checks a thread against). */
export async function conversationLength(db: Db | Tx, workspaceId: string, conversationId: string): Promise<number> {
  const [found] = await db.query<{ n: number | string }>(
    `SELECT COALESCE(max(seq) + 1, 0) AS n FROM conversation_turns WHERE workspace_id = $1 AND conversation_id = $2`,
    [workspaceId, conversationId],
  );
  return Number(found?.n ?? 0);
}
