/**
 * @module The statements of a run's spending, one typed function each: a `Db` or a `Tx` in (a `Tx` where
 * the statement only makes sense inside the caller's transaction: a row lock, a write that commits with
 * the caller's), one statement run, decoded values out (STU as numbers, not `numeric` strings; times as
 * Dates; camelCase). The policy files (budget.ts, usage-store.ts, daily-usage.ts, kill-switches.ts) call
 * these and hold no SQL. The money path's own statement, `start_runs`, is a store function
 * (store/functions/start_runs.sql): here is the call, its argument built from the function's own type
 * (generated/db.ts `FunctionArgument<'start_run_args'>`), and the decoding of its outcomes.
 */
import type { FunctionArgument } from '../../../../../generated/db.ts';
import type { Alias } from '../../vocabulary/alias.ts';
import { functionArgument, type Db, type Tx } from '../../store/db.ts';
import { HARDSTOP_PCT, type SpendingScope } from '../usage/index.ts';

/** The hour and day windows a run is counted in, by their start. */
export interface Windows {
  hour: Date;
  day: Date;
}

// ---- start_runs ---------------------------------------------------------------------------------

/** The run `start_runs` inserts (or, with `adopt`, the inbound run's row it takes over). */
export interface StartingRun {
  workspaceId: string;
  runId: string;
  adopt: boolean;
  now: Date;
  leaseUntil: Date;
  agentSlug: string;
  answeredBy: string;
  alias: Alias;
  source: string;
  conversationId: string | null;
  /** How many turns the conversation had in the copy the engine is given (checked against the store's). */
  conversationTurns: number | null;
  /** The start of the request (`Run.requestPreview`, domain/runs/request-preview.ts), written on the run's row when it starts. */
  requestPreview: string | null;
}

/** What `start_runs` is given for one run: the run to insert (or adopt), its worst case and the limits to hold it to. */
export interface StartRunInput extends StartingRun {
  quotaStu: number;
  /** STU per token of the run's alias. */
  stuRate: number;
  inputTokens: number;
  desiredOutput: number;
  limits: { run: number; hour: number; day: number };
  claim: { credentialId: string; key: string; requestHash: string; expiresAt: Date } | null;
}

/** The outcome `start_runs` answers for one run (a jsonb document), decoded. */
export type StartDecision =
  | { outcome: 'started'; outputCap: number; reservedStu: number; limitedBy: SpendingScope | null }
  | { outcome: 'replay'; runId: string }
  | { outcome: 'gone' | 'stale_history' | 'idempotency_mismatch' }
  /** `inputTooLarge`: below the hard stop, but not even the input and one output token fit (`consumedStu`: charged alone). */
  | { outcome: 'quota_exceeded'; consumedStu: number; allowanceStu: number; inputTooLarge?: boolean }
  | { outcome: 'kill_switch'; kind: 'manual' | 'hour' | 'day'; since: Date | null }
  | { outcome: 'crossed'; scope: SpendingScope }
  | { outcome: 'budget_reserved'; budget: 'quota' | 'hour' | 'day' };

/** The outcome as the statement returns it: STU may come as numeric strings, `since` as ISO text. */
type StoredDecision =
  | (Omit<Extract<StartDecision, { outcome: 'started' }>, 'reservedStu'> & { reservedStu: number | string })
  | (Omit<Extract<StartDecision, { outcome: 'quota_exceeded' }>, 'consumedStu' | 'allowanceStu'> & {
      consumedStu: number | string;
      allowanceStu: number | string;
    })
  | (Omit<Extract<StartDecision, { outcome: 'kill_switch' }>, 'since'> & { since: string | null })
  | Exclude<StartDecision, { outcome: 'started' | 'quota_exceeded' | 'kill_switch' }>;

/** The argument of start_runs for one run (named keys, typed from store/functions/start_runs.sql). */
type StartRunArgs = FunctionArgument<'start_run_args'>;

export function startRunArgs(input: StartRunInput): StartRunArgs {
  const { claim, limits } = input;
  return {
    workspace_id: input.workspaceId,
    run_id: input.runId,
    adopt: input.adopt,
    now: input.now,
    lease_until: input.leaseUntil,
    agent_slug: input.agentSlug,
    answered_by: input.answeredBy,
    alias: input.alias,
    source: input.source,
    conversation_id: input.conversationId,
    conversation_turns: input.conversationTurns,
    request_preview: input.requestPreview,
    quota_stu: input.quotaStu,
    hardstop_pct: HARDSTOP_PCT,
    rate: input.stuRate,
    input_tokens: input.inputTokens,
    desired_output: input.desiredOutput,
    limit_run: limits.run,
    limit_hour: limits.hour,
    limit_day: limits.day,
    credential_id: claim?.credentialId ?? null,
    idempotency_key: claim?.key ?? null,
    request_hash: claim?.requestHash ?? null,
    claim_expires_at: claim?.expiresAt ?? null,
  };
}

const START_RUNS = `SELECT start_runs($1) AS decisions`;

/**
 * The reservations and run rows of `inputs` (one or more, several workspaces' included) in one statement
 * (prepared on PostgreSQL); their decisions in the same order. Several go together through the group commit
 * (start-batch.ts).
 */
export async function startRuns(db: Db, inputs: readonly StartRunInput[]): Promise<StartDecision[]> {
  const [row] = await db.query<{ decisions: (StoredDecision | null)[] | string }>(START_RUNS, [JSON.stringify(inputs.map(startRunArgs))], {
    name: 'start_runs',
  });
  const decisions: (StoredDecision | null)[] = typeof row!.decisions === 'string' ? JSON.parse(row!.decisions) : row!.decisions;
  if (decisions.length !== inputs.length) throw new Error(`start_runs answered ${decisions.length} decisions for ${inputs.length} runs`);
  return decisions.map((decision, i) => {
    if (!decision) throw new Error(`start_runs answered no decision for run ${inputs[i]!.runId}`);
    return decode(decision);
  });
}

function decode(decision: StoredDecision): StartDecision {
  switch (decision.outcome) {
    case 'started':
      return { ...decision, reservedStu: Number(decision.reservedStu) };
    case 'quota_exceeded':
      return { ...decision, consumedStu: Number(decision.consumedStu), allowanceStu: Number(decision.allowanceStu) };
    case 'kill_switch':
      return { ...decision, since: decision.since ? new Date(decision.since) : null };
    default:
      return decision;
  }
}

// ---- the period (the quota's row) ---------------------------------------------------------------

/** A period's quota row as the quota reads it. */
export interface PeriodTotals {
  rolloverStu: number;
  consumedStu: number;
  /** How many times what the period consumed (or its rollover) changed: the usage tally keeps the highest (migration 0507). */
  version: number;
}

export async function readPeriod(db: Db | Tx, workspaceId: string, period: string): Promise<PeriodTotals | undefined> {
  const [row] = await db.query<{ rollover_stu: number; consumed_stu: number; version: number }>(
    `SELECT rollover_stu::float8 AS rollover_stu, consumed_stu::float8 AS consumed_stu, version::float8 AS version
       FROM usage_periods WHERE workspace_id = $1 AND period = $2`,
    [workspaceId, period],
  );
  return row ? { rolloverStu: Number(row.rollover_stu), consumedStu: Number(row.consumed_stu), version: Number(row.version) } : undefined;
}

/**
 * Creates the period's row of `now` with its rollover, unless another request created it first
 * (store/functions/ensure_usage_period.sql: the rollover is what the period before left of quota plus rollover,
 * never negative, capped at one period's quota).
 */
export async function ensurePeriodRow(db: Db | Tx, workspaceId: string, now: Date, quotaStu: number): Promise<void> {
  await db.query(`SELECT ensure_usage_period($1, $2, $3::float8)`, [workspaceId, now, quotaStu]);
}

// ---- the hour and day windows -------------------------------------------------------------------

/** A window's totals. */
export interface WindowTotals {
  /** Charged to runs that ended. */
  spentStu: number;
  /** Held by runs in progress. */
  reservedStu: number;
  trippedAt: Date | null;
}

/** One window's totals, undefined when no run touched it yet. */
export async function readWindow(db: Db | Tx, workspaceId: string, scope: 'hour' | 'day', windowStart: Date): Promise<WindowTotals | undefined> {
  const [row] = await db.query<{ spent: number; reserved: number; tripped_at: Date | null }>(
    `SELECT spent_stu::float8 AS spent, reserved_stu::float8 AS reserved, tripped_at FROM usage_windows
      WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`,
    [workspaceId, scope, windowStart],
  );
  return row ? { spentStu: Number(row.spent), reservedStu: Number(row.reserved), trippedAt: row.tripped_at } : undefined;
}

/** STU recorded on the runs of the windows beyond their reservations (`unbilled_stu`): the hour's and the whole day's. */
export async function unbilledStu(db: Db | Tx, workspaceId: string, windows: Windows): Promise<{ hour: number; day: number }> {
  const [row] = await db.query<{ hour: number; day: number }>(
    `SELECT coalesce(sum(unbilled_stu) FILTER (WHERE window_hour = $3), 0)::float8 AS hour, coalesce(sum(unbilled_stu), 0)::float8 AS day
       FROM runs WHERE workspace_id = $1 AND window_day = $2 AND unbilled_stu > 0`,
    [workspaceId, windows.day, windows.hour],
  );
  return { hour: Number(row?.hour ?? 0), day: Number(row?.day ?? 0) };
}

// ---- settle_runs ---------------------------------------------------------------------------------

/**
 * One run's settlement, as `settle_runs` reads it (store/functions/settle_runs.sql, the one place the
 * settlement is written): named keys, typed from the function's file (generated/db.ts).
 */
export type Settlement = FunctionArgument<'settle_run_args'>;

/**
 * Settles runs that end (releases their reservations, charges what they consumed, trips the windows they
 * bring to their limits) in one statement, inside the caller's transaction, which locked the runs' rows
 * first.
 */
export async function settleRuns(tx: Tx, settlements: readonly Settlement[]): Promise<void> {
  await tx.query(`SELECT settle_runs($1)`, [functionArgument(settlements)]);
}

/** A ledger line: what a run consumed in the period of `now` (a pause's part; a close writes its own in finish_runs). */
export async function insertLedgerLine(
  tx: Tx,
  line: { id: string; workspaceId: string; runId: string; alias: string; inputTokens: number; outputTokens: number; stu: number; now: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO usage_ledger (id, workspace_id, run_id, period, alias, input_tokens, output_tokens, stu, created_at)
     VALUES ($1, $2, $3, to_char($8::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM'), $4, $5, $6, $7, $8)`,
    [line.id, line.workspaceId, line.runId, line.alias, line.inputTokens, line.outputTokens, line.stu, line.now],
  );
}

// ---- the manual kill switch ---------------------------------------------------------------------

/** Turns the manual switch on from `now`; already on, it stays on since the first time and a new reason replaces the old one. */
export async function engageManualSwitch(
  db: Db | Tx,
  workspaceId: string,
  now: Date,
  detail: { reason: string | null; engagedBy: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO kill_switches (workspace_id, manual_since, reason, engaged_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id) DO UPDATE SET reason = COALESCE(EXCLUDED.reason, kill_switches.reason)`,
    [workspaceId, now, detail.reason, detail.engagedBy],
  );
}

export async function releaseManualSwitch(db: Db | Tx, workspaceId: string): Promise<void> {
  await db.query(`DELETE FROM kill_switches WHERE workspace_id = $1`, [workspaceId]);
}

/** The manual switch, undefined when it is off. */
export async function readManualSwitch(db: Db | Tx, workspaceId: string): Promise<{ since: Date; reason: string | null } | undefined> {
  const [row] = await db.query<{ manual_since: Date; reason: string | null }>(`SELECT manual_since, reason FROM kill_switches WHERE workspace_id = $1`, [
    workspaceId,
  ]);
  return row ? { since: row.manual_since, reason: row.reason } : undefined;
}

// ---- the ledger ---------------------------------------------------------------------------------

/** What the ledger charged in a period per UTC day (`YYYY-MM-DD`), alias and answering agent (only those with lines). */
export async function ledgerByDay(db: Db | Tx, workspaceId: string, period: string): Promise<{ day: string; alias: string; agent: string; stu: number }[]> {
  // Days are UTC dates written as text, so both drivers return the same value (a `date` would come
  // back as a local-time Date from one of them).
  const rows = await db.query<{ day: string; alias: string; agent: string; stu: number }>(
    `SELECT to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, l.alias, r.answered_by AS agent, sum(l.stu)::float8 AS stu
       FROM usage_ledger l JOIN runs r ON r.id = l.run_id AND r.workspace_id = l.workspace_id
      WHERE l.workspace_id = $1 AND l.period = $2
      GROUP BY 1, 2, 3`,
    [workspaceId, period],
  );
  return rows.map((row) => ({ ...row, stu: Number(row.stu) }));
}
