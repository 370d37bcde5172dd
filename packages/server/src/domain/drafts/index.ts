/**
 * @module The workspace's drafts as people read them (GET /drafts, GET /drafts/{draft_id}): what agents
 * wrote for review (an email, a proposal, a reply), newest first, by run and by agent. Drafts are
 * written by domain/runs when a run completes (steps.ts), redacted; this module only reads them.
 * Another workspace's draft is `404 not_found`.
 */
import { type Schema, zDraft } from '../../contract.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { date, int, oneOf, row, selectRow, selectRows, text } from '../../store/rows.ts';

type Draft = Schema<'Draft'>;

export interface DraftFilter {
  workspaceId: string;
  runId?: string | undefined;
  agentSlug?: string | undefined;
  limit: number;
  offset: number;
}

export type DraftService = ReturnType<typeof createDraftService>;

export function createDraftService(deps: { db: Db }) {
  const { db } = deps;
  return {
    /** One page of the workspace's drafts, newest first. */
    list: (filter: DraftFilter) => listDrafts(db, filter),
    /** @throws ServiceError not_found for none, or another workspace's */
    get: (workspaceId: string, draftId: string) => getDraft(db, workspaceId, draftId),
  };
}

const COLUMNS = 'id, run_id, agent_slug, kind, subject, body, created_at';
const draftColumns = { id: text, run_id: text, agent_slug: text, kind: oneOf(zDraft.shape.kind.options), subject: text, body: text, created_at: date };
const FILTER = `workspace_id = $1 AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent_slug = $3)`;

async function listDrafts(db: Db, filter: DraftFilter): Promise<{ data: Draft[]; total: number; limit: number; offset: number }> {
  const params = [filter.workspaceId, filter.runId ?? null, filter.agentSlug ?? null];
  const rows = await selectRows(
    db,
    row({ ...draftColumns, total: int }),
    `SELECT ${COLUMNS}, count(*) OVER ()::integer AS total FROM drafts WHERE ${FILTER}
      ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
    [...params, filter.limit, filter.offset],
  );
  // A page past the end has no row to carry the count.
  const total =
    rows[0]?.total ??
    (filter.offset > 0 ? ((await selectRow(db, row({ n: int }), `SELECT count(*)::integer AS n FROM drafts WHERE ${FILTER}`, params))?.n ?? 0) : 0);
  return { data: rows.map(toDraft), total, limit: filter.limit, offset: filter.offset };
}

async function getDraft(db: Db, workspaceId: string, draftId: string): Promise<Draft> {
  const found = await selectRow(db, row(draftColumns), `SELECT ${COLUMNS} FROM drafts WHERE id = $1 AND workspace_id = $2`, [draftId, workspaceId]);
  if (!found) throw fail('not_found', 'Draft not found.');
  return toDraft(found);
}

function toDraft(r: { id: string; run_id: string; agent_slug: string; kind: Draft['kind']; subject: string; body: string; created_at: Date }): Draft {
  return {
    id: r.id,
    runId: r.run_id,
    agentSlug: r.agent_slug,
    kind: r.kind,
    subject: r.subject,
    body: r.body,
    createdAt: r.created_at.toISOString(),
  };
}
