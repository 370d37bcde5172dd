/**
 * @module A run's steps, tool calls and drafts: written outside the closing statement (a pause's transaction) and read.
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { TableRow } from '../../../../../../generated/db.ts';
import type { Db, Tx } from '../../../store/db.ts';

/** Inserts a run's steps in one statement, in order. */
export async function insertSteps(
  tx: Tx,
  runId: string,
  now: Date,
  steps: readonly { id: string; index: number; kind: string; agentSlug: string; summary: string }[],
): Promise<void> {
  // One fixed statement for any number of steps: one array parameter per column, unnested in order.
  await tx.query(
    `INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at)
     SELECT s.id, $1, s.index, s.kind, s.agent_slug, s.summary, $2
       FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS s(id, index, kind, agent_slug, summary)`,
    [
      runId,
      now,
      steps.map((step) => step.id),
      steps.map((step) => step.index),
      steps.map((step) => step.kind),
      steps.map((step) => step.agentSlug),
      steps.map((step) => step.summary),
    ],
  );
}

export async function insertToolCall(
  tx: Tx,
  call: { id: string; runId: string; stepIndex: number; name: string; arguments: unknown; result: string | null; status: string; now: Date },
): Promise<void> {
  await tx.query(`INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    call.id,
    call.runId,
    call.stepIndex,
    call.name,
    JSON.stringify(call.arguments),
    call.result,
    call.status,
    call.now,
  ]);
}

export async function insertDraft(
  tx: Tx,
  draft: { id: string; workspaceId: string; runId: string; agentSlug: string; kind: string; subject: string; body: string; now: Date },
): Promise<void> {
  await tx.query(`INSERT INTO drafts (id, workspace_id, run_id, agent_slug, kind, subject, body, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    draft.id,
    draft.workspaceId,
    draft.runId,
    draft.agentSlug,
    draft.kind,
    draft.subject,
    draft.body,
    draft.now,
  ]);
}

/** A run's steps, in order. */
export async function readSteps(
  db: Db | Tx,
  runId: string,
): Promise<{ id: string; index: number; kind: string; agentSlug: string; summary: string; createdAt: Date }[]> {
  const rows = await db.query<Pick<TableRow<'run_steps'>, 'id' | 'index' | 'kind' | 'agent_slug' | 'summary' | 'created_at'>>(
    `SELECT id, index, kind, agent_slug, summary, created_at FROM run_steps WHERE run_id = $1 ORDER BY index`,
    [runId],
  );
  return rows.map((s) => ({ id: s.id, index: s.index, kind: s.kind, agentSlug: s.agent_slug, summary: s.summary, createdAt: s.created_at }));
}

/** A run's tool calls, by step; `arguments` parsed. */
export async function readToolCalls(
  db: Db | Tx,
  runId: string,
): Promise<{ id: string; stepIndex: number; name: string; arguments: unknown; result: string | null; status: string }[]> {
  const rows = await db.query<Pick<TableRow<'tool_calls'>, 'id' | 'step_index' | 'name' | 'arguments' | 'result' | 'status'>>(
    `SELECT id, step_index, name, arguments, result, status FROM tool_calls WHERE run_id = $1 ORDER BY step_index, id`,
    [runId],
  );
  return rows.map((t) => ({
    id: t.id,
    stepIndex: t.step_index,
    name: t.name,
    arguments: typeof t.arguments === 'string' ? JSON.parse(t.arguments) : t.arguments,
    result: t.result,
    status: t.status,
  }));
}
