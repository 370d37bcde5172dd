/**
 * @module What a paused run's checkpoint holds (domain/runs/pause.ts stores it as `loop_state`): the agent loop's
 * state (agent-loop/state.ts) and what the run needs to go on that its row does not hold (its request, the new
 * messages its conversation appends, the routing steps). The resumed execution (resume-run.ts) rebuilds the run
 * from it and the new reservation. Plain JSON both ways.
 */
import type { LoopState } from '../agent-loop/index.ts';
import type { Resumption } from './resume.ts';
import type { PendingRun } from './start.ts';

/** The run as the checkpoint keeps it: what a resumed execution needs beyond the run's row and its new reservation. */
export type SavedRun = Pick<PendingRun, 'agentSlug' | 'answeredBy' | 'departments' | 'source' | 'request' | 'newMessages' | 'conversationId' | 'steps'>;

export interface CheckpointState {
  /** The loop's state, without the steps the pause wrote. */
  state: LoopState;
  run: SavedRun;
  /** How many steps the run has written: the approval's step, the last of them, is `stepsWritten - 1`. */
  stepsWritten: number;
}

export function savedRunOf(run: PendingRun): SavedRun {
  const { agentSlug, answeredBy, departments, source, request, newMessages, conversationId, steps } = run;
  return { agentSlug, answeredBy, ...(departments ? { departments } : {}), source, request, newMessages, conversationId, steps };
}

/** Whether a stored checkpoint has the shape this version writes (a checkpoint is never written by anyone else). */
export function isCheckpointState(value: unknown): value is CheckpointState {
  if (typeof value !== 'object' || value === null || !('state' in value) || !('run' in value)) return false;
  const { state, run } = value;
  return (
    typeof state === 'object' &&
    state !== null &&
    'turns' in state &&
    'waiting' in state &&
    typeof run === 'object' &&
    run !== null &&
    'request' in run &&
    'stepsWritten' in value &&
    typeof value.stepsWritten === 'number'
  );
}

/** The resumed execution's run: the saved run under its new reservation (its start is the resume's). */
export function resumedRunOf(saved: SavedRun, stepsWritten: number, resumption: Resumption): PendingRun {
  const { run, reservation } = resumption;
  return {
    ...saved,
    runId: run.id,
    workspaceId: resumption.checkpoint.workspaceId,
    alias: saved.request.alias,
    quotaStu: reservation.quotaStu,
    windows: reservation.windows,
    reservedStu: reservation.reservedStu,
    inputTokens: reservation.inputTokens,
    outputCap: reservation.outputCap,
    limitedBy: reservation.limitedBy,
    createdAt: reservation.startedAt,
    recoveries: 0,
    firstStepIndex: stepsWritten,
  };
}
