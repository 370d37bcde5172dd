/**
 * @module Spending budgets and the quota in the store, enforced atomically: the hour and day
 * windows of the kill switches, the per-run limit, and the period's hard stop.
 *
 * A run *reserves* its worst case (input tokens plus its output cap, at the alias's STU rate)
 * before the engine is called, on the period row and the hour and day rows. Its input is its first model call's as
 * the engine reads it: the conversation, and the agent's instructions and tool definitions (runs/start.ts counts it,
 * engine/model-input.ts; each later call is checked against what is left, agent-loop/loop.ts). The check and the
 * reservation are one statement, `start_runs` (store/functions/start_runs.sql), which also
 * inserts the run: it locks the period row, then the day and hour rows (always in that order, so no
 * deadlock), for the length of that statement only, never across a round trip nor while the engine
 * runs. The starts that arrive while one statement is in flight go together as the next one
 * (start-batch.ts), which locks and updates each workspace's rows once for all its runs, deciding them
 * one after the other against running totals. Concurrent requests on any number of instances take turns
 * on the same rows, and admission counts what was charged plus what runs in progress hold
 * (`reserved_stu`), so neither a limit nor the quota's hard stop can be passed. The policy it applies:
 *
 * - Kill switches: when what was charged leaves less than the worst case, the output cap shrinks to
 *   fit; a run that then uses its whole cap has crossed the limit and fails with `kill_switch:<scope>`.
 *   When even the input does not fit, the run crosses at once, and an hour or day window *trips*
 *   (`tripped_at`: new invocations get `429 kill_switch` until the window ends). A window also trips
 *   when a run's charge brings it to its limit, or a crossing run's to within `TRIP_MARGIN` of it
 *   (usage/kill-switch.ts).
 *   The manual switch refuses every invocation while it is on.
 * - Reservations of other runs never shrink a cap nor trip a window: when the run fits the limits
 *   and the quota but not beside what runs in progress hold, it is refused with `429
 *   budget_reserved` (a few seconds' `Retry-After`, no run created), since that room comes back as
 *   they end.
 * - Quota: the hard stop caps the output as the windows do: when the worst case does not fit under it
 *   beside the charged consumption, the output cap shrinks to what fits, and the run answers what fits in
 *   it, as under a smaller `maxTokens` (it completes; its charge may bring the period to the hard stop).
 *   `429 quota_exceeded` only at the hard stop, or when not even the input and one output token fit (its
 *   `policy` and `pctConsumed` are then usage's, the message says why); beside what runs in progress hold,
 *   `429 budget_reserved`.
 * - The charge of a run never exceeds its reservation (runs/execute.ts bills within it), so no limit nor
 *   the hard stop is passed by what an engine reports.
 *
 * When a run ends its reservation is released and what it really consumed is charged, by one store
 * function whichever way it ends, `settle_runs` (store/functions/settle_runs.sql): called by the closing
 * statement (`finish_run`, runs/close.ts) for a run that executed, through `settleRun` below for a cancel
 * or a sweep.
 */
import {
  activeKillSwitch,
  killSwitchError,
  killSwitchWindows,
  quotaExceededError,
  resetAt,
  pctConsumed,
  policyLevel,
  type KillSwitchLimits,
  type SpendingScope,
  type StuRates,
  TRIP_MARGIN,
} from '../usage/index.ts';
import type { Db, Tx } from '../../store/db.ts';
import { fail, retryHints, type ServiceError } from '../../errors.ts';
import type { IdempotencyClaim } from '../runs/idempotency.ts';
import { startsOf } from './start-batch.ts';
import {
  engageManualSwitch,
  insertLedgerLine,
  readManualSwitch,
  readWindow,
  releaseManualSwitch,
  settleRuns,
  unbilledStu,
  type StartingRun,
  type Windows,
} from './queries.ts';

export type { Windows } from './queries.ts';

export interface BudgetSettings {
  limits: KillSwitchLimits;
  rates: StuRates;
}

/** What `start_runs` decided for an invocation that was not refused. */
export type Reservation =
  /** Reserved, and the run's row is `in_progress`. */
  | { outcome: 'started'; windows: Windows; reservedStu: number; outputCap: number; limitedBy: SpendingScope | null }
  /** The idempotency key names an earlier run: nothing reserved. */
  | { outcome: 'replay'; runId: string }
  /** The run to adopt is no longer waiting (canceled before it could start, or taken over). */
  | { outcome: 'gone' }
  /** The conversation has turns the caller's copy lacks: nothing reserved; read it again and retry. */
  | { outcome: 'stale_history' }
  /** Not even the input fits under `scope`'s limit: nothing reserved, the window tripped; the run fails at once. */
  | { outcome: 'crossed'; windows: Windows; scope: SpendingScope };

/** The message of `429 quota_exceeded` below the hard stop. */
const QUOTA_INPUT_TOO_LARGE =
  "What is left of this period's quota before its hard stop does not cover this request's input (its messages, and the agent's instructions and tool definitions the model is given) and one output token; a shorter request may fit.";

/** `Retry-After` of `429 budget_reserved`: reservations are freed as runs end, within seconds for most. */
const BUDGET_RESERVED_RETRY_AFTER_SEC = 5;

/**
 * `429 budget_reserved`: the invocation fits the limits and the quota, but runs in progress hold the
 * room it needs. Not a kill switch (none is engaged), and no run is created: the caller retries shortly.
 */
function budgetReservedError(budget: 'quota' | 'hour' | 'day'): ServiceError {
  return fail(
    'budget_reserved',
    'Runs in progress hold the budget this invocation needs; retry shortly or with a smaller maxTokens.',
    { budget, retryAfterSec: BUDGET_RESERVED_RETRY_AFTER_SEC },
    // Nothing was done: retrying the same request is safe, and succeeds once runs in progress end.
    retryHints(BUDGET_RESERVED_RETRY_AFTER_SEC * 1000, true),
  );
}

/** The run `start_runs` inserts (or adopts), and what its reservation needs. */
export interface RunToStart extends StartingRun {
  /** The workspace's quota per period (the plan's, or the operator's override); the rollover is added in the store. */
  quotaStu: number;
  inputTokens: number;
  desiredOutput: number;
  settings: BudgetSettings;
  /** The request's Idempotency-Key, claimed for the run until `expiresAt`. */
  idempotency?: (IdempotencyClaim & { expiresAt: Date }) | undefined;
}

/**
 * The invocation's first round trip: refuses it (`429 quota_exceeded`, `429 kill_switch`, `429
 * budget_reserved`, `400 invalid_request` for a reused idempotency key), or reserves its worst case
 * and inserts its run, in one statement, shared with the starts that waited beside it (see the module
 * comment). Resolves once that statement committed.
 */
export async function reserveRun(db: Db, run: RunToStart): Promise<Reservation> {
  const { now, settings } = run;
  const windows = windowsOf(now);
  const decision = await startsOf(db).start({
    workspaceId: run.workspaceId,
    runId: run.runId,
    adopt: run.adopt,
    now,
    leaseUntil: run.leaseUntil,
    agentSlug: run.agentSlug,
    answeredBy: run.answeredBy,
    alias: run.alias,
    source: run.source,
    conversationId: run.conversationId,
    quotaStu: run.quotaStu,
    stuRate: settings.rates[run.alias],
    inputTokens: run.inputTokens,
    desiredOutput: run.desiredOutput,
    limits: settings.limits,
    claim: run.idempotency ?? null,
    conversationTurns: run.conversationTurns,
    requestPreview: run.requestPreview,
  });
  switch (decision.outcome) {
    case 'started':
      return { outcome: 'started', windows, reservedStu: decision.reservedStu, outputCap: decision.outputCap, limitedBy: decision.limitedBy };
    case 'replay':
      return decision;
    case 'gone':
    case 'stale_history':
      return { outcome: decision.outcome };
    case 'crossed':
      return { outcome: 'crossed', windows, scope: decision.scope };
    case 'idempotency_mismatch':
      throw fail('invalid_request', "'idempotency-key' was already used with a different request.", { param: 'idempotency-key' });
    case 'quota_exceeded': {
      const used = { quotaStu: decision.allowanceStu, rolloverStu: 0, consumedStu: decision.consumedStu };
      const refused = {
        allowed: false,
        policy: 'hardstop',
        pctConsumed: pctConsumed(used),
        resetAt: resetAt(now).toISOString(),
        retryAfterMs: Math.max(1, resetAt(now).getTime() - now.getTime()),
      } as const;
      // Below the hard stop, the request's input alone does not fit: say so, with the level usage reads.
      if (decision.inputTooLarge) throw quotaExceededError({ ...refused, policy: policyLevel(used) }, QUOTA_INPUT_TOO_LARGE);
      throw quotaExceededError(refused);
    }
    case 'kill_switch': {
      // The same answer activeKillSwitch gives for these totals: its kind, since when, and Retry-After.
      const { since } = decision;
      const { limits } = settings;
      const active = activeKillSwitch(
        {
          now,
          hourStu: decision.kind === 'hour' ? limits.hour : 0,
          dayStu: decision.kind === 'day' ? limits.day : 0,
          manualSince: decision.kind === 'manual' ? since : null,
          hourSince: since,
          daySince: since,
        },
        limits,
      );
      throw killSwitchError(active!);
    }
    case 'budget_reserved':
      throw budgetReservedError(decision.budget);
  }
}

/**
 * Inside the transaction that ends a run outside its execution (cancel, sweep), which locked the run's
 * row: settles it in one statement, `settle_runs` (store/functions/settle_runs.sql, the rules a close
 * applies too): releases its reservation, charges `stu` to its windows (and, when not zero, to the period
 * of `now`), and trips a window it brings to its limit, or within `TRIP_MARGIN` of it for the scope it
 * `crossed`. Without a quota (a cancel, a sweep), a settlement that charges nothing creates no period row; the
 * pause gives its run's (settlePause).
 */
export async function settleRun(
  tx: Tx,
  input: {
    workspaceId: string;
    windows: Windows;
    reservedStu: number;
    stu: number;
    crossed: SpendingScope | null;
    now: Date;
    limits: KillSwitchLimits;
    /** The workspace's quota, for a period row `settle_runs` creates (a charge in a month not started yet). */
    quotaStu?: number;
  },
): Promise<void> {
  const { windows, limits } = input;
  await settleRuns(tx, [
    {
      workspace_id: input.workspaceId,
      window_day: windows.day,
      window_hour: windows.hour,
      reserved_stu: input.reservedStu,
      stu: input.stu,
      crossed: input.crossed,
      now: input.now,
      quota_stu: input.quotaStu ?? null,
      limit_hour: limits.hour,
      limit_day: limits.day,
      trip_margin: TRIP_MARGIN,
    },
  ]);
}

/**
 * Inside the transaction that pauses a run for an approval (domain/runs/pause.ts), which locked the run's row:
 * settles what the run consumed so far as a close would (`settle_runs`: its reservation released, `stu` charged
 * to the period of `now`, created when missing, and to its windows, which trip at their limits) and writes its
 * ledger line, so the ledger, the period and the runs' `stu` stay equal. The resume reserves again
 * (`reserveRun`, adopting the run) and the final close charges only what came after.
 */
export async function settlePause(
  tx: Tx,
  input: {
    workspaceId: string;
    runId: string;
    alias: string;
    windows: Windows;
    reservedStu: number;
    usage: { inputTokens: number; outputTokens: number };
    stu: number;
    quotaStu: number;
    now: Date;
    limits: KillSwitchLimits;
    ledgerId: string;
  },
): Promise<void> {
  const { windows, limits, usage } = input;
  if (input.stu !== 0 || usage.inputTokens !== 0 || usage.outputTokens !== 0) {
    await insertLedgerLine(tx, {
      id: input.ledgerId,
      workspaceId: input.workspaceId,
      runId: input.runId,
      alias: input.alias,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      stu: input.stu,
      now: input.now,
    });
  }
  await settleRun(tx, {
    workspaceId: input.workspaceId,
    windows,
    reservedStu: input.reservedStu,
    stu: input.stu,
    crossed: null,
    now: input.now,
    limits,
    quotaStu: input.quotaStu,
  });
}

/** The manual switch: on (from `now`) or off. Returns whether it is on afterwards. */
export async function setManualKillSwitch(
  db: Db | Tx,
  workspaceId: string,
  on: boolean,
  now: Date,
  detail: { reason?: string | undefined; engagedBy?: string | undefined } = {},
): Promise<void> {
  // Already on: it stays on since the first time (activeSince does not move); a new reason replaces the old one.
  if (on) await engageManualSwitch(db, workspaceId, now, { reason: detail.reason ?? null, engagedBy: detail.engagedBy ?? null });
  else await releaseManualSwitch(db, workspaceId);
}

export interface KillSwitchStatus {
  manualSince: Date | null;
  /** The reason given when it was turned on from the panel. */
  manualReason: string | null;
  hour: WindowStatus;
  day: WindowStatus;
}

export interface WindowStatus {
  windowStart: Date;
  /** Charged to runs that ended. */
  spentStu: number;
  /** Held by runs in progress. */
  reservedStu: number;
  limitStu: number;
  trippedAt: Date | null;
}

/** What the operator sees with `service kill-switch status`. */
export async function killSwitchStatus(db: Db, workspaceId: string, now: Date, limits: KillSwitchLimits): Promise<KillSwitchStatus> {
  const windows = windowsOf(now);
  const manual = await readManualSwitch(db, workspaceId);
  const read = async (scope: 'hour' | 'day'): Promise<WindowStatus> => {
    const totals = await readWindow(db, workspaceId, scope, windows[scope]);
    return {
      windowStart: windows[scope],
      spentStu: totals?.spentStu ?? 0,
      reservedStu: totals?.reservedStu ?? 0,
      limitStu: limits[scope],
      trippedAt: totals?.trippedAt ?? null,
    };
  };
  return { manualSince: manual?.since ?? null, manualReason: manual?.reason ?? null, hour: await read('hour'), day: await read('day') };
}

/**
 * STU that engines reported beyond the reservations of the runs started in the current hour and day
 * windows: recorded on the runs (`unbilled_stu`), never charged. For operators (`kill-switch status`).
 */
export async function unbilledInWindows(db: Db, workspaceId: string, now: Date): Promise<{ hour: number; day: number }> {
  return unbilledStu(db, workspaceId, windowsOf(now));
}

function windowsOf(now: Date): Windows {
  const { hour, day } = killSwitchWindows(now);
  return { hour: hour.start, day: day.start };
}
