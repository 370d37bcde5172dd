/**
 * @module Group commit (store/group-commit.ts) of the closing statement (`finish_run`, close.ts):
 * closes that arrive while one is in flight wait, and go to the store together as one statement (`finish_runs`,
 * store/functions/finish_runs.sql), one commit for all of them, as soon as the statement in flight returns.
 * A close that finds nothing in flight goes out alone, as the statement close.ts always ran: at once on the embedded
 * store, and on PostgreSQL at the end of the event loop's turn, with the closes of that turn (`waitForTurn`,
 * store/group-commit.ts `groupCommitEach` says why). Each close is
 * one object of named keys (`finish_run_args`); the statement settles the batch at once: each period
 * and window row of a workspace is updated once with the sums of the batch's runs (settle_runs.sql).
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
 * connection, or PostgreSQL's pool). Closes that must share a transaction with other writes (an inbound
 * run's run-ended hooks) do not come here: close.ts runs them in their transaction.
 */
import { type Db, onPostgres } from '../../store/db.ts';
import { groupCommitEach, MAX_GROUP_STATEMENTS } from '../../store/group-commit.ts';
import { type FinishedRun, type FinishRunArgs, finishRun, finishRuns } from './queries/close.ts';
import { traceStatement } from '../../tracing/statement.ts';

/**
 * At most this many closes in one statement; the rest wait for the next one. A quiet workspace's close goes at once,
 * in a statement beside the one in flight (store/group-commit.ts: one statement per workspace in flight, up to
 * `MAX_GROUP_STATEMENTS`), so on the embedded store it waits for at most the statement in flight: the bound keeps that
 * one short (docs/performance.md, "Fair group commits"), while the statement's fixed cost is still shared.
 */
export const MAX_CLOSE_BATCH = 16;

/** At most this many closes in one statement while their workspace is the only one closing runs (as for the starts). */
export const MAX_CLOSE_BATCH_ALONE = 64;

export interface CloseBatcher {
  /** Runs `finish_run` with `close` (alone, or with the closes waiting beside it); its row once committed. */
  finish(close: FinishRunArgs): Promise<FinishedRun>;
  /** Closes waiting for the statement in flight to return (tests). */
  waiting(): number;
}

export function createCloseBatcher(db: Db, maxBatch = MAX_CLOSE_BATCH, maxBatchAlone = MAX_CLOSE_BATCH_ALONE): CloseBatcher {
  /** The batch's rows in the order of its closes (a run twice in a batch makes the statement fail: each is then closed alone). */
  async function many(batch: FinishRunArgs[]): Promise<(FinishedRun | undefined)[]> {
    const byRun = new Map((await traceStatement('finish_runs', batch.length, finishRuns, db, batch)).map((row) => [row.id, row]));
    return batch.map((close) => byRun.get(close.run_id));
  }
  // One span per statement when traces are on (tracing/statement.ts); off, the statement alone.
  const submit = groupCommitEach(many, (close: FinishRunArgs) => traceStatement('finish_run', 1, finishRun, db, close), {
    maxItems: maxBatch,
    maxItemsAlone: maxBatchAlone,
    maxStatements: MAX_GROUP_STATEMENTS,
    waitForTurn: onPostgres(db),
  });
  return {
    async finish(close) {
      const row = await submit(close);
      if (!row) throw new Error(`finish_runs answered no row for run ${close.run_id}`);
      return row;
    },
    waiting: submit.waiting,
  };
}
