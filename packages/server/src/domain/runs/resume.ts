/**
 * @module Resuming a run that waited for an approval (pause.ts), exactly once, on whichever instance claims it
 * first. The API for the agent loop and the resumer (worker/resumer.ts):
 *
 *   claimResumption(ctx, { instance })  Claims one resumable checkpoint (its approval decided, or expired: then
 *       stored `expired` and taken as a rejection) in one `UPDATE … WHERE claimed_at IS NULL … RETURNING`, and in
 *       the same transaction stores `approval.decided` in the run's event log. Then it reserves the run's budget
 *       again with the rules of a start (spending/budget.ts `reserveRun`, adopting the run as start_runs adopts an
 *       inbound run: the quota's hard stop, the hour and day windows, the kill switches, the manual one, the
 *       per-run limit), and stores `run.resumed`. Answers:
 *       - `resumed`: the resumption (the run, its checkpoint with the loop's state and the call's state, the
 *         decision, the new reservation, the event log's last sequence): the loop goes on from there;
 *       - `refused`: the reservation was refused; the run failed with that reason (`run.failed`);
 *       - `gone`: the run ended meanwhile (canceled);
 *       - `later`: runs in progress hold the budget it needs (`budget_reserved`): the claim is given back and a
 *         later pass tries again;
 *       - undefined: nothing to resume.
 *   beginApprovedCall(ctx, checkpoint)  `approved` → `calling`, committed before the tool is called. False when the
 *       call is not approved (rejected, expired, or `unknown` after a crash): the tool must not be called.
 *   endApprovedCall(ctx, checkpoint, outcome)  `calling` → `completed` | `failed`, with the result (redacted).
 *
 * Exactly once: a claim is one row's update; two resumers get one row between them. A claim whose instance stops
 * before its reservation is given back after CLAIM_LEASE_MS (`releaseStaleClaims`), and the adoption itself
 * admits a run only while it is not started, so even then one execution resumes it. An instance that stops
 * during the resumed execution leaves its lease to run out: the sweeper (recovery.ts) makes the checkpoint
 * claimable again, the call's `calling` recorded `unknown` (the loop tells the model; it is never called again).
 */
import type { Clock } from '../../clock.ts';
import { ServiceError } from '../../errors.ts';
import { expireApproval } from '../approvals/decision.ts';
import { appendRunLog, lastStoredSequence } from '../run-events/queries.ts';
import { firstExecutionSequence } from '../run-events/log.ts';
import { reserveRun, type Reservation } from '../spending/budget.ts';
import { killSwitchReason } from '../usage/index.ts';
import { toAlias } from '../../vocabulary/alias.ts';
import { type Checkpoint, claimCheckpoint, conversationLength, markResumed, moveCall, releaseClaim, releaseStaleClaims } from './checkpoints.ts';
import type { RunContext } from './context.ts';
import { endRun } from './recovery.ts';
import { readRunRecord, toRun, toRunSource, type Run, type RunRecord } from './store.ts';

export type { Checkpoint } from './checkpoints.ts';

/** How long a claim may go without its reservation before another instance may claim the run again. */
export const CLAIM_LEASE_MS = 60_000;

export type ResumeContext = Pick<RunContext, 'db' | 'clock' | 'budget' | 'agentSettings' | 'leaseMs' | 'redactor'>;

export interface Decision {
  /** `expired`: nobody decided in time; the run takes it as a rejection. */
  status: 'approved' | 'rejected' | 'expired';
  /** The member who decided (`usr_…`); null for an expiry. */
  decidedBy: string | null;
}

/** What a resumed run's execution starts from. */
export interface Resumption {
  run: Run;
  /** The loop's state, the call (with its state: `approved`, `rejected`, `expired`, or `unknown` after a crash). */
  checkpoint: Checkpoint;
  decision: Decision;
  /** The new reservation, as a start's: the execution's start (`PendingRun.createdAt`, which its close names), windows, cap. */
  reservation: {
    startedAt: Date;
    reservedStu: number;
    inputTokens: number;
    outputCap: number;
    limitedBy: Extract<Reservation, { outcome: 'started' }>['limitedBy'];
    windows: Extract<Reservation, { outcome: 'started' }>['windows'];
    quotaStu: number;
  };
  /** The last sequence of the run's stored log (`run.resumed`'s): the resumed execution numbers its events after it. */
  lastSequence: number;
}

export type ClaimOutcome =
  | { kind: 'resumed'; resumption: Resumption }
  | { kind: 'refused'; runId: string; reason: string }
  | { kind: 'gone'; runId: string }
  | { kind: 'later'; runId: string };

/** The continuation of a resumed run (the agent loop's, wired by the composition root). */
export type ResumeRun = (resumption: Resumption) => Promise<void>;

export async function claimResumption(ctx: ResumeContext, input: { instance: string; checkpointId?: string }): Promise<ClaimOutcome | undefined> {
  const { db, clock } = ctx;
  const now = clock.now();
  const claimed = await db.transaction(async (tx) => {
    const checkpoint = await claimCheckpoint(tx, { now, instance: input.instance, checkpointId: input.checkpointId });
    if (!checkpoint) return undefined;
    if (checkpoint.decision === 'expired') await expireApproval(tx, checkpoint.approvalId, now);
    const run = await readRunRecord(tx, checkpoint.workspaceId, checkpoint.runId);
    // The decision enters the run's log once (a claim again after a crash has it already).
    if (!(await decisionLogged(tx, checkpoint))) {
      const sequence = (await lastStoredSequence(tx, run.id)) + 1;
      await appendRunLog(tx, {
        runId: run.id,
        workspaceId: run.workspaceId,
        events: [
          { sequence, type: 'approval.decided', runId: run.id, at: now.toISOString(), approvalId: checkpoint.approvalId, decision: checkpoint.decision },
        ],
        now,
      });
    }
    return { checkpoint, run };
  });
  if (!claimed) return undefined;
  const { checkpoint, run } = claimed;
  const decision: Decision = { status: checkpoint.decision, decidedBy: checkpoint.decidedBy };
  return resumeClaimed(ctx, run, checkpoint, decision);
}

/** Whether the run's stored log already has this approval's decision. */
async function decisionLogged(tx: Parameters<typeof lastStoredSequence>[0], checkpoint: Checkpoint): Promise<boolean> {
  const [found] = await tx.query(
    `SELECT 1 FROM run_events e, jsonb_array_elements(e.events) AS v
      WHERE e.run_id = $1 AND v->>'type' = 'approval.decided' AND v->>'approvalId' = $2 LIMIT 1`,
    [checkpoint.runId, checkpoint.approvalId],
  );
  return found !== undefined;
}

async function resumeClaimed(ctx: ResumeContext, run: RunRecord, checkpoint: Checkpoint, decision: Decision): Promise<ClaimOutcome> {
  const { db, clock, budget } = ctx;
  const now = clock.now();
  const settings = await ctx.agentSettings(run.workspaceId);
  let reservation: Reservation;
  try {
    reservation = await reserveRun(db, {
      workspaceId: run.workspaceId,
      runId: run.id,
      adopt: true,
      now,
      leaseUntil: new Date(now.getTime() + ctx.leaseMs),
      agentSlug: run.agentSlug,
      answeredBy: run.answeredBy,
      alias: toAlias(run.alias),
      source: toRunSource(run.source),
      conversationId: run.conversationId,
      conversationTurns: run.conversationId ? await conversationLength(db, run.workspaceId, run.conversationId) : null,
      requestPreview: null,
      quotaStu: settings.quotaStu,
      inputTokens: checkpoint.next.inputTokens,
      desiredOutput: checkpoint.next.desiredOutput,
      settings: budget,
    });
  } catch (err) {
    if (!(err instanceof ServiceError)) {
      await releaseClaim(db, checkpoint.id, clock.now());
      throw err;
    }
    if (err.code === 'budget_reserved') {
      await releaseClaim(db, checkpoint.id, clock.now());
      return { kind: 'later', runId: run.id };
    }
    const reason = err.is('kill_switch') ? `kill_switch:${err.extras.kind}` : err.code;
    return refuse(ctx, checkpoint, reason);
  }
  switch (reservation.outcome) {
    case 'started':
      break;
    case 'crossed':
      return refuse(ctx, checkpoint, killSwitchReason(reservation.scope));
    case 'stale_history':
      // Another run of the conversation added a turn between the read and the adoption: a later pass tries again.
      await releaseClaim(db, checkpoint.id, clock.now());
      return { kind: 'later', runId: run.id };
    case 'gone':
    case 'replay':
      // Canceled since (or, after a lost claim, resumed by another instance): nothing to resume here.
      await markResumed(db, checkpoint.id, clock.now());
      return { kind: 'gone', runId: run.id };
  }
  const resumed = await db.transaction(async (tx) => {
    await markResumed(tx, checkpoint.id, now);
    const started = await readRunRecord(tx, run.workspaceId, run.id);
    // After a crash (the run handed over again, recovery.ts), numbered above what the dead execution sent live.
    const sequence = Math.max((await lastStoredSequence(tx, run.id)) + 1, started.recoveries > 0 ? firstExecutionSequence(started.recoveries) : 0);
    await appendRunLog(tx, {
      runId: run.id,
      workspaceId: run.workspaceId,
      events: [{ sequence, type: 'run.resumed', runId: run.id, at: now.toISOString(), approvalId: checkpoint.approvalId }],
      now,
    });
    return { run: toRun(started), lastSequence: sequence };
  });
  return {
    kind: 'resumed',
    resumption: {
      run: resumed.run,
      checkpoint: { ...checkpoint, resumedAt: now },
      decision,
      reservation: {
        startedAt: now,
        reservedStu: reservation.reservedStu,
        inputTokens: checkpoint.next.inputTokens,
        outputCap: reservation.outputCap,
        limitedBy: reservation.limitedBy,
        windows: reservation.windows,
        quotaStu: settings.quotaStu,
      },
      lastSequence: resumed.lastSequence,
    },
  };
}

/** The reservation was refused at the resume: the run fails with the refusal's reason (`run.failed`). */
async function refuse(ctx: ResumeContext, checkpoint: Checkpoint, reason: string): Promise<ClaimOutcome> {
  const now = ctx.clock.now();
  await markResumed(ctx.db, checkpoint.id, now);
  await endRun(ctx.db, now, {
    workspaceId: checkpoint.workspaceId,
    runId: checkpoint.runId,
    status: 'failed',
    reason,
    limits: ctx.budget.limits,
    callUnmade: true,
  });
  return { kind: 'refused', runId: checkpoint.runId, reason };
}

/** Gives back the claims whose instance stopped before their reservation (older than CLAIM_LEASE_MS). */
export async function releaseLostClaims(ctx: { db: RunContext['db']; clock: Clock }): Promise<number> {
  const now = ctx.clock.now();
  return releaseStaleClaims(ctx.db, new Date(now.getTime() - CLAIM_LEASE_MS), now);
}

/** `approved` → `calling`, committed before the tool is called; false when the call must not be made. */
export async function beginApprovedCall(ctx: { db: RunContext['db']; clock: Clock }, checkpoint: Pick<Checkpoint, 'id'>): Promise<boolean> {
  return moveCall(ctx.db, checkpoint.id, 'approved', 'calling', ctx.clock.now());
}

/** `calling` → `completed` or `failed`, with its result (redacted); false when recovery already made it `unknown`. */
export async function endApprovedCall(
  ctx: { db: RunContext['db']; clock: Clock; redactor: RunContext['redactor'] },
  checkpoint: Pick<Checkpoint, 'id'>,
  outcome: { status: 'completed' | 'failed'; result: string },
): Promise<boolean> {
  return moveCall(ctx.db, checkpoint.id, 'calling', outcome.status, ctx.clock.now(), ctx.redactor.text(outcome.result));
}
