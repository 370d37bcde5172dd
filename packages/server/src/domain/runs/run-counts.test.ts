/**
 * GET /runs's `total` comes from counters per class (`run_counts`, kept by triggers on `runs`), not
 * from counting the runs: after inserts, a routed adoption, status changes and a workspace's
 * deletion, the total of every filter combination equals a count of the runs themselves, on both
 * stores; and the list costs the same statement whatever the number of runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import type { Db } from '../../store/db.ts';
import { listRunRows, type RunFilters } from './store.ts';

const STATUSES = [undefined, 'in_progress', 'completed', 'failed', 'canceled'] as const;
const AGENTS = [undefined, 'orchestrator', 'finance', 'nobody'] as const;
const ALIASES = [undefined, 'Sonata'] as const;
const SOURCES = [undefined, 'inbound_webhook'] as const;

describe.each(testBackends())('run counts on $name', ({ open }) => {
  let store: TestStore;
  let db: Db;
  const at = new Date('2026-11-01T10:00:00Z');

  beforeAll(async () => {
    store = await open();
    db = store.db;
    for (const id of ['wsp_countsA', 'wsp_countsB']) await db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $1, $2)`, [id, at]);
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  async function insertRun(id: string, workspaceId: string, agent: string, answeredBy: string, alias: string, source: string) {
    await db.query(
      `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
       VALUES ($1, $2, 'in_progress', $3, $4, $5, $6, $7, $7, $7, $7)`,
      [id, workspaceId, agent, answeredBy, alias, source, at],
    );
  }

  /** Every filter combination's total against a count of the runs themselves. */
  async function expectTotalsExact(workspaceId: string) {
    for (const status of STATUSES)
      for (const agentSlug of AGENTS)
        for (const alias of ALIASES)
          for (const source of SOURCES) {
            const filters: RunFilters = { status, agentSlug, alias, source, limit: 1, offset: 0 };
            const [want] = await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1 AND ($2::text IS NULL OR status = $2)
                 AND ($3::text IS NULL OR agent_slug = $3 OR answered_by = $3) AND ($4::text IS NULL OR alias = $4) AND ($5::text IS NULL OR source = $5)`,
              [workspaceId, status ?? null, agentSlug ?? null, alias ?? null, source ?? null],
            );
            const list = await listRunRows(db, workspaceId, filters);
            expect(list.total, JSON.stringify(filters)).toBe(want!.n);
            expect(list.data).toHaveLength(Math.min(1, want!.n));
          }
  }

  it('keeps every filter combination exact through inserts, adoption and status changes', async () => {
    const agents = ['sales', 'finance', 'orchestrator'];
    for (let i = 0; i < 30; i += 1) {
      const agent = agents[i % 3]!;
      await insertRun(
        `run_counts${String(i).padStart(14, '0')}`,
        'wsp_countsA',
        agent,
        agent === 'orchestrator' ? 'sales' : agent,
        i % 2 ? 'Sonata' : 'Prelude',
        ['api', 'inbound_webhook', 'mcp'][i % 3]!,
      );
    }
    await insertRun('run_countsotherAAAAAA', 'wsp_countsB', 'sales', 'sales', 'Sonata', 'api');
    // An inbound run adopted by the router's answer, then runs ending in each way.
    await db.query(`UPDATE runs SET answered_by = 'finance' WHERE id = $1`, ['run_counts00000000000002']);
    await db.query(`UPDATE runs SET status = 'completed' WHERE workspace_id = 'wsp_countsA' AND seq % 3 = 0`);
    await db.query(`UPDATE runs SET status = 'failed' WHERE workspace_id = 'wsp_countsA' AND seq % 3 = 1`);
    await db.query(`UPDATE runs SET status = 'canceled' WHERE id = $1`, ['run_counts00000000000005']);
    // An update that changes no counted column leaves the counters alone.
    await db.query(`UPDATE runs SET status = status, updated_at = $2 WHERE workspace_id = $1`, ['wsp_countsA', at]);
    await expectTotalsExact('wsp_countsA');
    await expectTotalsExact('wsp_countsB');
    // A page past the end still carries the total.
    const past = await listRunRows(db, 'wsp_countsA', { limit: 20, offset: 100 });
    expect(past).toMatchObject({ data: [], total: 30, offset: 100 });
  });

  it('counts several statements of one transaction, not what a savepoint undid, and a run deleted alone', async () => {
    await db.transaction(async (tx) => {
      // Several runs in one statement, then an update moving some of them both ways between classes.
      await tx.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
         SELECT 'run_countsbatch' || lpad(n::text, 6, '0'), 'wsp_countsA', 'in_progress', 'finance', 'finance', 'Sonata', 'api', $1, $1, $1, $1
           FROM generate_series(1, 6) AS n`,
        [at],
      );
      await tx.query(`UPDATE runs SET status = CASE WHEN status = 'in_progress' THEN 'completed' ELSE 'in_progress' END WHERE id IN ($1, $2, $3)`, [
        'run_countsbatch000001',
        'run_countsbatch000002',
        'run_counts00000000000003',
      ]);
      await tx.exec(`SAVEPOINT undone`);
      await tx.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
         VALUES ('run_countsundone000001', 'wsp_countsA', 'in_progress', 'sales', 'sales', 'Prelude', 'mcp', $1, $1, $1, $1)`,
        [at],
      );
      await tx.exec(`ROLLBACK TO SAVEPOINT undone`);
      await tx.query(`DELETE FROM runs WHERE id = $1`, ['run_countsbatch000006']);
    });
    await expectTotalsExact('wsp_countsA');
  });

  it("leaves no counter of a deleted workspace, and the others' stay", async () => {
    await db.query(`DELETE FROM workspaces WHERE id = 'wsp_countsB'`);
    const left = await db.query(`SELECT 1 FROM run_counts WHERE workspace_id = 'wsp_countsB'`);
    expect(left).toEqual([]);
    await expectTotalsExact('wsp_countsA');
  });
});
