/**
 * @module Group commit of the closing statement (`finish_run`, close.ts): closes that arrive while
 * one is in flight wait, and go to the store together as one statement (`finish_runs`, migration
 * 0509_finish_runs.sql), one commit for all of them, as soon as the statement in flight returns.
 * A close that finds nothing in flight goes out at once, alone, as the statement close.ts always
 * ran: one invocation at a time waits for nothing, and runs exactly what it ran before.
 *
 * A caller's promise resolves once the statement that carried its close has returned, i.e. after
 * its commit: an answered close is durable. When the batch's statement fails with an error of the
 * store (an error answer: nothing of it was committed), each of its closes is sent again alone, so
 * one run that cannot close never fails the others, and each caller sees what its lone statement
 * answers. A failure with no answer from the store (the connection cut, the store closed) may have
 * come after the commit: those closes are not sent again (a second `finish_run` would charge twice),
 * each caller gets that failure, as a lone close that lost its connection would.
 *
 * One batcher per run service (its context's `closes`), over the service's store handle (PGlite's one
 * connection, or PostgreSQL's pool). Closes that must share a transaction with other writes (drafts,
 * approvals, run-ended hooks) do not come here: close.ts runs them in their transaction.
 */
import type { Db } from '../../store/db.ts';
import { type FinishedRun, type FinishRunParams, finishRun, finishRuns } from './queries.ts';

/** At most this many closes in one statement; the rest wait for the next one. */
export const MAX_CLOSE_BATCH = 64;

export interface CloseBatcher {
  /** Runs `finish_run` with `params` (alone, or with the closes waiting beside it); its row once committed. */
  finish(params: FinishRunParams): Promise<FinishedRun>;
  /** Closes waiting for the statement in flight to return (tests). */
  waiting(): number;
}

interface Waiting {
  params: FinishRunParams;
  resolve(row: FinishedRun): void;
  reject(err: unknown): void;
}

export function createCloseBatcher(db: Db, maxBatch = MAX_CLOSE_BATCH): CloseBatcher {
  let queue: Waiting[] = [];
  let inFlight = false;

  const alone = (params: FinishRunParams): Promise<FinishedRun> => finishRun(db, params);

  async function sendAlone(waiting: Waiting): Promise<void> {
    try {
      waiting.resolve(await alone(waiting.params));
    } catch (err) {
      waiting.reject(err);
    }
  }

  async function sendTogether(batch: Waiting[]): Promise<void> {
    let rows: FinishedRun[];
    try {
      rows = await finishRuns(
        db,
        batch.map((w) => w.params),
      );
    } catch (err) {
      if (!answeredByStore(err)) {
        for (const waiting of batch) waiting.reject(err);
        return;
      }
      // Nothing was committed: each close alone, so that the one that failed fails alone.
      await Promise.all(batch.map(sendAlone));
      return;
    }
    const byId = new Map<string, FinishedRun[]>();
    for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
    for (const waiting of batch) {
      const row = byId.get(waiting.params[0])?.shift();
      if (row) waiting.resolve(row);
      else waiting.reject(new Error(`finish_runs answered no row for run ${waiting.params[0]}`));
    }
  }

  async function drain(): Promise<void> {
    inFlight = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        await (batch.length === 1 ? sendAlone(batch[0]!) : sendTogether(batch));
      }
    } finally {
      inFlight = false;
    }
  }

  return {
    finish(params) {
      return new Promise<FinishedRun>((resolve, reject) => {
        queue.push({ params, resolve, reject });
        if (!inFlight) void drain();
      });
    },
    waiting: () => queue.length,
  };
}

/**
 * The store answered the statement with an error (PostgreSQL's ErrorResponse, kept by both
 * drivers and across the embedded store's thread: a `severity` and a SQLSTATE `code`): the
 * statement ran in its own transaction, which was not committed. A failure without an answer (a
 * cut connection, a closed store, a client-side timeout) leaves that unknown.
 */
function answeredByStore(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { severity, code } = err as Error & { severity?: unknown; code?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
