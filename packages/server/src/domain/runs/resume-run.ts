/**
 * @module The continuation of a run resumed after an approval (resume.ts claimed it and reserved its budget again;
 * worker/resumer.ts calls this on whichever instance claimed it). The call the run waited for is settled first:
 * approved, it is made once (`beginApprovedCall` commits `calling` before the tool is called, `endApprovedCall`
 * records its result; a call found `unknown` after a crash is never made again); rejected or expired, it is not
 * made. Either way the model reads the outcome as the call's result, and the agent loop goes on from its saved
 * state: to an answer (the run closes, billing only what this execution consumed: the pause billed the rest), or
 * to another call that needs a decision (the run pauses again).
 */
import type { TokenUsage } from '../../engine/index.ts';
import { callWaitingTool, type Decided, settleWaitingCall } from '../agent-loop/index.ts';
import { isCheckpointState, resumedRunOf } from './checkpoint-state.ts';
import type { RunContext } from './context.ts';
import { beginExecution, driveLoop, endExecution, loopIO, loopRunOf, type Execution, type RunOutcome } from './execute.ts';
import { beginApprovedCall, endApprovedCall, type Checkpoint, type Resumption } from './resume.ts';
import { recordDecidedCall } from './steps.ts';
import type { PendingRun } from './start.ts';

const NOTHING: TokenUsage = { inputTokens: 0, outputTokens: 0 };

export async function resumeRun(ctx: RunContext, resumption: Resumption): Promise<RunOutcome> {
  const saved = resumption.checkpoint.loopState;
  if (!isCheckpointState(saved)) throw new Error(`checkpoint ${resumption.checkpoint.id} holds no loop state this version reads`);
  const run = resumedRunOf(saved.run, saved.stepsWritten, resumption);
  // What the execution before the pause consumed was billed by the pause: this one bills only its own.
  const state = { ...saved.state, billed: NOTHING, reported: NOTHING };
  const execution = beginExecution(ctx, run, {}, { after: resumption.lastSequence });
  const decided = await decide(ctx, run, execution, state, resumption.checkpoint);
  const outcome = settleWaitingCall(state, decided, ctx.redactor.text);
  // The approval's step (the last the pause wrote) records what became of its call.
  const result = ctx.redactor.text(outcome.ok ? outcome.content : outcome.error);
  await recordDecidedCall(ctx.db, run.runId, saved.stepsWritten - 1, { status: outcome.ok ? 'completed' : 'failed', result });
  return endExecution(ctx, run, execution, await driveLoop(ctx, run, execution, {}, state));
}

/** The waiting call's outcome: made now when approved (once), else the decision that kept it from being made. */
async function decide(
  ctx: RunContext,
  run: PendingRun,
  execution: Execution,
  state: Parameters<typeof callWaitingTool>[3],
  checkpoint: Checkpoint,
): Promise<Decided> {
  const { call } = checkpoint;
  switch (call.status) {
    case 'rejected':
    case 'expired':
    case 'unknown':
      return { status: call.status };
    case 'completed':
    case 'failed':
      // Made before its instance stopped, and recorded: its result, not a second call.
      return {
        status: 'approved',
        outcome: call.status === 'completed' ? { ok: true, content: call.result ?? '' } : { ok: false, error: call.result ?? 'The tool failed.' },
      };
    case 'approved': {
      if (!(await beginApprovedCall(ctx, checkpoint))) return { status: 'unknown' };
      const io = loopIO(ctx, run, execution, {});
      const outcome = await callWaitingTool(ctx, loopRunOf(run), io, state);
      const result = ctx.redactor.text(outcome.ok ? outcome.content : outcome.error);
      await endApprovedCall(ctx, checkpoint, { status: outcome.ok ? 'completed' : 'failed', result });
      io.record({ type: 'tool.called', name: ctx.redactor.text(call.name), summary: ctx.redactor.text(`Called ${call.name}.`) });
      return { status: 'approved', outcome };
    }
    default:
      // `pending_approval` or `calling`: a claim hands out neither.
      return { status: 'unknown' };
  }
}
