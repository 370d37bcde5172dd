/**
 * @module The closing statement's call: `finish_run` and `finish_runs`, store functions
 * (store/functions/finish_run.sql, finish_runs.sql), and the decoding of the runs they answer.
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { FunctionArgument } from '../../../../../../generated/db.ts';
import { functionArgument, type Db, type Tx } from '../../../store/db.ts';
import { bool, row, selectRow } from '../../../store/rows.ts';
import { RUN_COLUMNS, decodeRunView, type RunViewRow, type RunRow, type RunRecord, type RunView } from './run-row.ts';

/**
 * One close: `finish_run`'s one argument, a jsonb object with named keys (`finish_run_args`, declared in
 * store/functions/finish_run.sql, typed by generated/db.ts), the run and its workspace always named.
 */
export type FinishRunArgs = FunctionArgument<'finish_run_args'> & { run_id: string; workspace_id: string };

/** The run `finish_run` answers: as it stands after the close (which may have left it alone). */
export type FinishedRun = RunView & Pick<RunRecord, 'startedAt'>;

/**
 * Prepared on PostgreSQL (named): its columns are listed, so a column added to `runs` by a
 * migration (another instance, a rolling deploy) does not change the statement's result type.
 */
const FINISH_RUN = `SELECT ${RUN_COLUMNS}, started_at FROM finish_run($1)`;

/** Closes a run that executed, in one statement (alone, or first in the closing transaction). */
export async function finishRun(db: Db | Tx, close: FinishRunArgs): Promise<FinishedRun> {
  const [row] = await db.query<RunViewRow & Pick<RunRow, 'started_at'>>(FINISH_RUN, [functionArgument(close)], { name: 'finish_run' });
  return { ...decodeRunView(row!), startedAt: row!.started_at };
}

/** Several closes in one `jsonb` array of the same objects (store/functions/finish_runs.sql). */
const FINISH_RUNS = `SELECT ${RUN_COLUMNS}, started_at FROM finish_runs($1)`;

/**
 * Closes several runs in one statement (close-batch.ts), each as `finish_run` would: the runs as they
 * stand after, one row per close, in no particular order (match them by id).
 */
export async function finishRuns(db: Db, closes: readonly FinishRunArgs[]): Promise<FinishedRun[]> {
  const rows = await db.query<RunViewRow & Pick<RunRow, 'started_at'>>(FINISH_RUNS, [functionArgument(closes)], { name: 'finish_runs' });
  return rows.map((row) => ({ ...decodeRunView(row), startedAt: row.started_at }));
}

/** Whether a destination of the workspace takes one of `types` (what its closes prepare: close-detail.ts). */
export async function destinationsTakeAny(db: Db, workspaceId: string, types: readonly string[]): Promise<boolean> {
  const found = await selectRow(
    db,
    row({ takes: bool }),
    `SELECT EXISTS (SELECT 1 FROM webhook_destinations WHERE workspace_id = $1 AND events && $2::text[]) AS takes`,
    [workspaceId, types],
  );
  return found?.takes ?? false;
}
