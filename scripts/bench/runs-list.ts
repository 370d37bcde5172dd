/**
 * `pnpm bench:runs-list [--runs N] [--samples S]`: what one page of `GET /runs` costs in the store
 * as a workspace's runs grow, on the embedded store and (with DATABASE_URL) on PostgreSQL. For 100
 * runs and for N (default 1,000,000), it times `listRunRows` (the page and its total, the total
 * from the per-class counters) and, beside it, counting the matching runs as the list did before
 * (`count(*) OVER ()`), unfiltered and filtered by status. Prints medians in milliseconds.
 */
import { parseArgs } from 'node:util';
import { listRunRows, type RunFilters } from '../../packages/server/src/domain/runs/store.ts';
import type { OpenDb } from '../../packages/server/src/store/db.ts';
import { testBackends } from '@service/testing/store';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '1000000' }, samples: { type: 'string', default: '21' }, help: { type: 'boolean' } },
});
if (values.help) {
  console.log('Usage: pnpm bench:runs-list [--runs N (default 1000000)] [--samples S (default 21)]');
  process.exit(0);
}
const RUNS = Number(values.runs);
const SAMPLES = Number(values.samples);

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

async function addRuns(db: OpenDb, workspaceId: string, from: number, to: number): Promise<void> {
  // In slices, so the embedded store's statements stay bounded; statuses and agents vary.
  for (let start = from; start < to; start += 50_000) {
    await db.query(
      `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
       SELECT 'run_b' || lpad(i::text, 16, '0'), $1, (ARRAY['completed','completed','failed','canceled'])[1 + i % 4],
              (ARRAY['orchestrator','sales','finance'])[1 + i % 3], (ARRAY['sales','sales','finance'])[1 + i % 3], 'Sonata', 'api',
              timestamptz '2026-01-01' + i * interval '1 second', now(), now(), now()
         FROM generate_series($2::int, $3::int - 1) AS i`,
      [workspaceId, start, Math.min(to, start + 50_000)],
    );
  }
}

const counted = (db: OpenDb, workspaceId: string, status: string | null) =>
  db.query(
    `SELECT *, count(*) OVER ()::int AS total FROM runs WHERE workspace_id = $1 AND ($2::text IS NULL OR status = $2)
      ORDER BY created_at DESC, seq DESC LIMIT 20`,
    [workspaceId, status],
  );

for (const backend of testBackends()) {
  const store = await backend.open();
  const db = store.db as OpenDb;
  try {
    await db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wsp_bench', 'bench', now())`);
    let have = 0;
    for (const size of [100, RUNS]) {
      process.stderr.write(`${backend.name}: ${size} runs …\n`);
      await addRuns(db, 'wsp_bench', have, size);
      have = size;
      const page: RunFilters = { limit: 20, offset: 0 };
      const failed: RunFilters = { status: 'failed', limit: 20, offset: 0 };
      const row = {
        store: backend.name,
        runs: size,
        'list (ms)': await median(() => listRunRows(db, 'wsp_bench', page)),
        'list status=failed (ms)': await median(() => listRunRows(db, 'wsp_bench', failed)),
        'count(*) OVER () (ms)': await median(() => counted(db, 'wsp_bench', null)),
        'count(*) OVER () status=failed (ms)': await median(() => counted(db, 'wsp_bench', 'failed')),
      };
      console.log(
        JSON.stringify(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' && k.includes('ms') ? Number(v.toFixed(2)) : v]))),
      );
    }
  } finally {
    await store.cleanup();
  }
}
process.exit(0);
