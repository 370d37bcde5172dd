/**
 * @module The runs list: a page of a class of the workspace's runs and its count (the counters per class,
 * `run_counts`).
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { Db, Tx } from '../../../store/db.ts';
import { decodeWaitingFor, type WaitingApproval, type WaitingForColumns, waitingForSql } from '../checkpoints.ts';
import { decodeRunView, type RunRow, type RunView } from './run-row.ts';

/** A run of a page, with the approval it waits for, if any. */
export interface ListedRun {
  run: RunView;
  waitingFor: WaitingApproval | undefined;
}

/**
 * Joins each run of `page` (a relation of `runs` rows) to the approval it waits for: only a run in progress and not
 * started (paused, or an inbound run not adopted yet) is looked up.
 */
const WAITING_JOIN = `LEFT JOIN LATERAL (${waitingForSql('page.id', 'page.workspace_id')}) waiting ON page.status = 'in_progress' AND page.started_at IS NULL`;

type ListedRow = RunRow & WaitingForColumns;

const decodeListed = (row: ListedRow): ListedRun => ({ run: decodeRunView(row), waitingFor: decodeWaitingFor(row) });

/** The filters on a run's class; an absent one is null and matches every run. */
export interface RunClass {
  status: string | null;
  /** The agent addressed or, for a routed run, the department that answered it. */
  agentSlug: string | null;
  alias: string | null;
  source: string | null;
}

/** The filters on a run's class, in `runs` and in `run_counts` alike ($2 … $5). */
const CLASS_MATCHES = `($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR agent_slug = $3 OR answered_by = $3)
    AND ($4::text IS NULL OR alias = $4) AND ($5::text IS NULL OR source = $5)`;

/** Matches a class within a time range ($6, $7: either may be null). */
const RANGE_MATCHES = `workspace_id = $1 AND ${CLASS_MATCHES}
    AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)`;

const classParams = (workspaceId: string, match: RunClass) => [workspaceId, match.status, match.agentSlug, match.alias, match.source];

/**
 * One page of a class of the workspace's runs, newest first, and how many the class has in all, from
 * the counters per class (`run_counts`, kept by triggers on `runs`), in one statement. The counters'
 * row is always there, so a page past the end still carries the total.
 */
export async function pageRunsOfClass(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass,
  page: { limit: number; offset: number },
): Promise<{ runs: ListedRun[]; total: number }> {
  const rows = await db.query<ListedRow & { total: number }>(
    `WITH total AS (SELECT coalesce(sum(runs), 0)::int AS total FROM run_counts WHERE workspace_id = $1 AND ${CLASS_MATCHES}),
          page AS (SELECT * FROM runs WHERE workspace_id = $1 AND ${CLASS_MATCHES} ORDER BY created_at DESC, seq DESC LIMIT $6 OFFSET $7)
     SELECT page.*, waiting.*, total.total FROM total LEFT JOIN page ON true ${WAITING_JOIN} ORDER BY page.created_at DESC, page.seq DESC`,
    [...classParams(workspaceId, match), page.limit, page.offset],
  );
  // A page past the end is the total's row alone, its run columns null.
  const runs = rows.filter((row) => row.id !== null).map(decodeListed);
  return { runs, total: rows[0]?.total ?? 0 };
}

/**
 * One page of a class of the workspace's runs created in a range, newest first, with the total that
 * match (counted by a window before LIMIT, so it is undefined on a page past the end).
 */
export async function pageRunsInRange(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass & { createdAfter: Date | null; createdBefore: Date | null },
  page: { limit: number; offset: number },
): Promise<{ runs: ListedRun[]; total: number | undefined }> {
  const rows = await db.query<ListedRow & { total: number }>(
    `WITH page AS (SELECT *, count(*) OVER ()::int AS total FROM runs WHERE ${RANGE_MATCHES} ORDER BY created_at DESC, seq DESC LIMIT $8 OFFSET $9)
     SELECT page.*, waiting.* FROM page ${WAITING_JOIN} ORDER BY page.created_at DESC, page.seq DESC`,
    [...classParams(workspaceId, match), match.createdAfter, match.createdBefore, page.limit, page.offset],
  );
  return { runs: rows.map(decodeListed), total: rows[0]?.total };
}

/** How many runs of a class the workspace created in a range. */
export async function countRunsInRange(
  db: Db | Tx,
  workspaceId: string,
  match: RunClass & { createdAfter: Date | null; createdBefore: Date | null },
): Promise<number> {
  const [row] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM runs WHERE ${RANGE_MATCHES}`, [
    ...classParams(workspaceId, match),
    match.createdAfter,
    match.createdBefore,
  ]);
  return row!.total;
}
