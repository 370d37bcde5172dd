/**
 * @module The embedded store's upkeep: what PostgreSQL's autovacuum does, which PGlite never runs. Without it the
 * embedded store never has statistics, so every plan is made as if each table were nearly empty (a plan chosen while a
 * table was small stays the plan once it is large: domain/inbound-webhooks/run-queue.test.ts, domain/runs/close-lookup
 * .test.ts), and it never reclaims the row versions that updates and deletes leave behind (its files only grow).
 *
 * A pass reads the counters of the store's tables (`pg_stat_user_tables`, this connection's pending counts flushed
 * first) and takes the one table furthest past autovacuum's default thresholds: `VACUUM (ANALYZE)` once its dead rows
 * passed 50 + 20 % of its rows, or its inserts since its last vacuum 1,000 + 20 %; `ANALYZE` once its changes since its
 * last analysis passed 50 + 10 %. One table a pass and at most one pass a minute (from the worker's tick): PGlite's one
 * thread answers nothing else meanwhile, 0.1-0.2 s for a table of 200,000 rows on a 2-core machine
 * (docs/performance.md, "Inbound events under a backlog"). On PostgreSQL, whose autovacuum does this, a pass does nothing.
 */
import { atMostEvery, type Clock } from '../clock.ts';
import type { Db, OpenDb } from './db.ts';
import { quoteIdent } from './postgres.ts';
import { bool, row, selectRow, text } from './rows.ts';

/** At most one pass a minute, however often the worker ticks. */
export const UPKEEP_EVERY_MS = 60_000;

/** What a pass did: the table it vacuumed (and analyzed) or analyzed; none when no table was due. */
export type UpkeepDone = { table: string; vacuumed: boolean } | undefined;

const dueRow = row({ table: text, vacuum: bool });

/**
 * The table of the current schema furthest past its threshold (the largest of its three counts over their
 * thresholds, when above 1), and whether it needs a vacuum or only an analysis. A table never analyzed counts as empty.
 */
const DUE = `
  WITH counts AS (
    SELECT s.relname AS table,
           s.n_dead_tup / (50 + 0.2 * GREATEST(c.reltuples, 0)) AS dead,
           s.n_ins_since_vacuum / (1000 + 0.2 * GREATEST(c.reltuples, 0)) AS inserted,
           s.n_mod_since_analyze / (50 + 0.1 * GREATEST(c.reltuples, 0)) AS changed
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = current_schema()
  )
  SELECT "table", dead > 1 OR inserted > 1 AS vacuum FROM counts
   WHERE GREATEST(dead, inserted, changed) > 1
   ORDER BY GREATEST(dead, inserted, changed) DESC, "table"
   LIMIT 1`;

/** One pass: the table most due, vacuumed and analyzed, or analyzed. */
export async function upkeepPass(db: Db): Promise<UpkeepDone> {
  // The counts of this connection's own statements reach the shared counters when it is next idle, or when told to.
  await db.query('SELECT pg_stat_force_next_flush()');
  const due = await selectRow(db, dueRow, DUE);
  if (!due) return undefined;
  await db.exec(`${due.vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE'} ${quoteIdent(due.table)}`);
  return { table: due.table, vacuumed: due.vacuum };
}

/** The worker's upkeep of the embedded store: a pass at most every {@link UPKEEP_EVERY_MS} (1 when it did something); nothing on PostgreSQL. */
export function embeddedStoreUpkeep(deps: { db: OpenDb; clock: Clock }): () => Promise<number> {
  if (deps.db.driver !== 'pglite') return async () => 0;
  return atMostEvery(deps.clock, UPKEEP_EVERY_MS, async () => ((await upkeepPass(deps.db)) ? 1 : 0));
}
