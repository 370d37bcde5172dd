/**
 * @module Run events: a run's ordered, resumable event log (the contract's `RunEvent`, GET /runs/{run_id}/events).
 * log.ts says what the log holds and in which order; hub.ts carries the live tail of the runs executing here to
 * readers anywhere; reader.ts follows a log to its terminal event; retention.ts merges old logs' fragments.
 */
export { createRunEventHub, type LiveRun, type RunEventHub } from './hub.ts';
export { answerLog, answerOnly, type ExecutionEvent, type ExecutionEventBody, type RunEvent } from './log.ts';
export { followRunEvents, type FollowOptions, type ReadRunLog, type StoredRunLog } from './reader.ts';
export { compactRunLogs, runLogCompactor } from './retention.ts';
export { streamErrorOf, type StreamErrorBody } from './stream-error.ts';
