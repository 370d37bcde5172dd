/**
 * @module Retention of the run event log: once a finished run's log is older than the retention
 * (RUN_EVENT_RETENTION_HOURS), its `text.delta` fragments are merged into one at the first one's
 * sequence (their text concatenated, as the run's answer), and every other event stays: the log still
 * replays the same text and the same terminal event, in far fewer rows of JSON.
 */
import { atMostEvery, type Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { compactRunLogs } from './queries.ts';

/** Logs merged per statement; a backlog drains over several ticks. */
const BATCH = 500;
/** At most one pass per minute, however often the worker ticks. */
const EVERY_MS = 60_000;

export { compactRunLogs };

/** A pass over the logs past their retention, run at most every EVERY_MS; answers how many it merged. */
export function runLogCompactor(deps: { db: Db; clock: Clock; retentionMs: number }): () => Promise<number> {
  return atMostEvery(deps.clock, EVERY_MS, (now) => compactRunLogs(deps.db, new Date(now.getTime() - deps.retentionMs), now, BATCH));
}
