/**
 * @module Group commit (store/group-commit.ts) of the invocations' first statement (`start_runs`,
 * store/functions/start_runs.sql): starts that arrive while one is in flight wait, and go to the store
 * together as the next statement, which locks each workspace's period and windows once for all its runs of
 * the batch and updates them once. A start that finds nothing in flight goes out at once on the embedded store, and
 * on PostgreSQL at the end of the event loop's turn, with the starts of that turn (store/group-commit.ts
 * `groupCommitEach` says why). Under load a workspace's concurrent
 * invocations no longer queue one by one on its period row (each held for one statement), but share one
 * statement per batch.
 *
 * A caller's promise resolves once the statement that carried its start has returned, i.e. after its commit:
 * the run is in the store before the invocation goes on. When the batch's statement fails with an error of the
 * store (nothing of it was committed: an idempotency claim lost to a concurrent request, say), each of its
 * starts is sent again alone, so one run's failure fails only that run, and each caller sees what its lone
 * statement answers. A failure with no answer from the store (the connection cut, the store closed) may have
 * come after the commit: those starts are not sent again (a second start would reserve twice); each caller
 * gets that failure, as a lone start that lost its connection would.
 *
 * One batcher per store handle (PGlite's one connection, or PostgreSQL's pool): `startsOf(db)`.
 */
import { type Db, onPostgres } from '../../store/db.ts';
import { groupCommitEach, MAX_GROUP_STATEMENTS } from '../../store/group-commit.ts';
import { type StartDecision, type StartRunInput, startRuns } from './queries.ts';
import { traceStatement } from '../../tracing/statement.ts';

/**
 * At most this many starts in one statement; the rest wait for the next one. A start of a quiet workspace goes at
 * once, in a statement beside the one in flight (store/group-commit.ts `MAX_GROUP_STATEMENTS`); the bound keeps the
 * statement in flight short (domain/runs/close-batch.ts `MAX_CLOSE_BATCH`).
 */
export const MAX_START_BATCH = 16;

/**
 * At most this many starts in one statement while their workspace is the only one starting runs (store/group-commit.ts
 * `ACTIVE_MS`): a lone workspace's burst shares each statement's cost over up to four times as many starts, and a
 * workspace that becomes active finds at most one such statement in flight before the cap is back to
 * {@link MAX_START_BATCH} (docs/performance.md, "Larger statements for a workspace alone").
 */
export const MAX_START_BATCH_ALONE = 64;

export interface StartBatcher {
  /** Runs `start_runs` for `input` (alone, or with the starts waiting beside it); its decision once committed. */
  start(input: StartRunInput): Promise<StartDecision>;
  /** Starts waiting for the statement in flight to return (tests). */
  waiting(): number;
}

export function createStartBatcher(db: Db, maxBatch = MAX_START_BATCH, maxBatchAlone = MAX_START_BATCH_ALONE): StartBatcher {
  // One `start_runs` span per statement when traces are on (tracing/statement.ts); off, the statement alone.
  const traced = (batch: readonly StartRunInput[]) => traceStatement('start_runs', batch.length, startRuns, db, batch);
  const submit = groupCommitEach(traced, async (input: StartRunInput) => (await traced([input]))[0]!, {
    maxItems: maxBatch,
    maxItemsAlone: maxBatchAlone,
    maxStatements: MAX_GROUP_STATEMENTS,
    waitForTurn: onPostgres(db),
  });
  return { start: submit, waiting: submit.waiting };
}

const batchers = new WeakMap<Db, StartBatcher>();

/** The start batcher of a store handle (made on first use; every run service over that handle shares it). */
export function startsOf(db: Db): StartBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = createStartBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher;
}
