/**
 * @module The run's event log (the contract's `RunEvent`), in order of `sequence`:
 *
 *   1 `run.created`, 2 `run.routed`          read from the run's row
 *   3… `text.delta`, `tool.called`,          what only the execution sees ("execution events"; a delegating
 *      `run.routed` (a handoff),              run's handoffs too),
 *      (`run.restarted` first, from          after a restart of an inbound run: firstExecutionSequence)
 *      1,000,003 on, after a restart)
 *      `approval.requested`, `draft.created`  written by the closing statement (its argument's `log`,
 *                                            store/functions/finish_runs.sql) as one jsonb array; a
 *                                            completed run's answer alone is not written but read from its
 *                                            row (answerOnly, answerLog)
 *   n+1 `run.usage`, n+2 the terminal event  read from the run's row once it is terminal
 *
 * So the log adds no statement to an invocation: while the run executes its events live in memory
 * (hub.ts) and reach the other instances through the store's notifications.
 * A run that never executed here (failed before its engine was called, swept after its instance
 * died, refused at hand-over) has no execution events: its log is created, routed, usage, terminal.
 */
import type { Schema } from '../../contract.ts';
import type { Run } from '../runs/store.ts';
import { streamErrorOf } from './stream-error.ts';

export type RunEvent = Schema<'RunEvent'>;
export type RunEventType = RunEvent['type'];

/** The events only the execution sees, as the closing statement stores them. */
export type ExecutionEvent = Extract<
  RunEvent,
  {
    type: 'run.restarted' | 'text.delta' | 'tool.called' | 'run.routed' | 'approval.requested' | 'draft.created' | 'approval.decided' | 'run.resumed';
  }
>;

/** An execution event before the log gives it its place and time. */
export type ExecutionEventBody = ExecutionEvent extends infer E ? (E extends ExecutionEvent ? Omit<E, 'sequence' | 'runId' | 'at'> : never) : never;

/** The sequence of the first execution event (after `run.created` and `run.routed`). */
export const FIRST_EXECUTION_SEQUENCE = 3;

/**
 * Sequences each execution of a run may use: an inbound run handed over again after its instance stopped numbers
 * its events from `recoveries` × this + 3, above anything the executions before it sent (an answer of at most
 * 32,000 tokens is far fewer events), so a reader's `Last-Event-ID` stays below the new execution's events.
 */
export const SEQUENCES_PER_EXECUTION = 1_000_000;

/** The first sequence of an execution's events: 3, or after a restart its `run.restarted`'s. */
export function firstExecutionSequence(recoveries: number): number {
  return recoveries * SEQUENCES_PER_EXECUTION + FIRST_EXECUTION_SEQUENCE;
}

const TERMINAL: ReadonlySet<RunEventType> = new Set(['run.completed', 'run.failed', 'run.canceled']);

export function isTerminal(event: RunEvent): boolean {
  return TERMINAL.has(event.type);
}

type HeadRow = Pick<Run, 'id' | 'agentSlug' | 'routedTo' | 'alias' | 'source' | 'conversationId' | 'createdAt'>;

/** `run.created` and `run.routed`, from the run's row. */
export function headEvents(run: HeadRow): RunEvent[] {
  const at = run.createdAt;
  return [
    {
      sequence: 1,
      type: 'run.created',
      runId: run.id,
      at,
      agentSlug: run.agentSlug,
      alias: run.alias,
      source: run.source,
      conversationId: run.conversationId,
    },
    { sequence: 2, type: 'run.routed', runId: run.id, at, agentSlug: run.routedTo ?? run.agentSlug },
  ];
}

type TailRow = Pick<Run, 'id' | 'status' | 'failureReason' | 'usage' | 'completedAt' | 'updatedAt'>;

/** `run.usage` and the terminal event of a terminal run, after `last`. */
export function tailEvents(run: TailRow, last: number): RunEvent[] {
  const at = run.completedAt ?? run.updatedAt;
  const base = { runId: run.id, at };
  const usage: RunEvent = {
    sequence: last + 1,
    type: 'run.usage',
    ...base,
    usage: run.usage,
  };
  const sequence = last + 2;
  if (run.status === 'completed') return [usage, { sequence, type: 'run.completed', ...base }];
  if (run.status === 'canceled') return [usage, { sequence, type: 'run.canceled', ...base }];
  const { error, message } = streamErrorOf({ id: run.id, failureReason: run.failureReason }, '');
  return [usage, { sequence, type: 'run.failed', ...base, reason: run.failureReason ?? 'internal_error', error, message: message ?? 'The run failed.' }];
}

type AnswerRow = Pick<Run, 'id' | 'status' | 'content' | 'completedAt'>;

/**
 * Whether an execution's log is only its answer, whole, in one fragment at the first execution sequence (a
 * synchronous call that neither paused nor restarted, nor called a tool): the closing statement stores no log for such
 * a run (close.ts), and {@link answerLog} gives it back from the run's row.
 */
export function answerOnly(log: readonly ExecutionEvent[], content: string): boolean {
  const only = log[0];
  return log.length === 1 && only?.type === 'text.delta' && only.sequence === FIRST_EXECUTION_SEQUENCE && only.delta === content && content !== '';
}

/**
 * The log {@link answerOnly} left unstored, read from the run's row: a completed run's answer as its one fragment, at
 * the time it completed (its answer arrived whole). Null for a run that has no answer to give.
 */
export function answerLog(run: AnswerRow): ExecutionEvent[] | null {
  if (run.status !== 'completed' || !run.content || run.completedAt === null) return null;
  return [{ sequence: FIRST_EXECUTION_SEQUENCE, type: 'text.delta', runId: run.id, at: run.completedAt, delta: run.content }];
}

/**
 * The whole log of a terminal run: its head, what its execution stored, its tail after `atLeast`
 * when that is further: the last sequence the execution had, where the retention merged its
 * fragments; or what a reader already holds when nothing was stored (its instance was lost mid-run).
 */
export function storedLog(run: HeadRow & TailRow, stored: readonly ExecutionEvent[], atLeast = 0): RunEvent[] {
  const last = Math.max(FIRST_EXECUTION_SEQUENCE - 1, stored.at(-1)?.sequence ?? 0, atLeast);
  return [...headEvents(run), ...stored, ...tailEvents(run, last)];
}

/**
 * The stored answer of a retried streamed invocation, as the stream first sent it: its fragments
 * (each with its sequence) and the sequence of its terminal event.
 */
export function fragmentsOf(log: readonly RunEvent[]): { delta: string; sequence: number }[] {
  return log.flatMap((event) => (event.type === 'text.delta' ? [{ delta: event.delta, sequence: event.sequence }] : []));
}
