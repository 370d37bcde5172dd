/**
 * @module Where an invocation's store time goes, inside the store: sync invocations (`POST /v1/inference`, local
 * engine) one after another through the app (`app.request`, no sockets, no request log), on a fresh store
 * (PGlite in memory, or a schema of DATABASE_URL with BENCH_STORE=postgres). Four modes:
 *
 *   pnpm exec tsx scripts/bench/inside-store.ts                      statements: wall ms per invocation of each
 *                                                                    store statement, timed around Db.query
 *   BENCH_MODE=marks pnpm exec tsx scripts/bench/inside-store.ts     pieces: the money path's functions replaced
 *                                                                    (in this throwaway store) by copies that log
 *                                                                    clock_timestamp() before each piece
 *   BENCH_MODE=ablate pnpm exec tsx scripts/bench/inside-store.ts    one piece removed at a time (triggers
 *                                                                    disabled, outbox_enqueue a no-op), rounds
 *                                                                    interleaved with the untouched store
 *   BENCH_MODE=prepared pnpm exec tsx scripts/bench/inside-store.ts  the named statements prepared (as served) or
 *                                                                    not (their names dropped), rounds interleaved
 *   BENCH_STORE=postgres DATABASE_URL=postgres://… …                 the same on PostgreSQL
 *   BENCH_INVOCATIONS=1000 BENCH_ROUNDS=3                            (the defaults)
 *   BENCH_CONCURRENCY=16                                             statements mode: that many invocations in flight,
 *                                                                    so starts and closes go in batches (group commits);
 *                                                                    also prints each statement's mean batch
 *   BENCH_EXTRA_RUNS=100000                                          the workspace has that many finished runs first
 *
 * Marks: PGlite's clock_timestamp() has millisecond resolution (its WASM clock), so one interval says
 * little, but over many invocations, whose phase against the millisecond is random, the mean of the
 * quantised intervals is the mean interval. A mark costs an INSERT; its cost (timed back to back, `mark
 * itself`) is taken out of each interval. Time outside the marks (the statement's parse, plan and call,
 * the return of its rows, the commit) is the statement's wall time less its first-to-last-mark span.
 * Figures go to stderr.
 */
import { createTestApp } from '../../packages/testing/src/app.ts';
import { testBackends } from '../../packages/testing/src/store.ts';
import type { OpenDb } from '../../packages/server/src/store/db.ts';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

const MODE = process.env.BENCH_MODE ?? 'statements';
const N = Number(process.env.BENCH_INVOCATIONS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const backend = testBackends().find((b) => b.name === (process.env.BENCH_STORE ?? 'pglite'));
if (!backend) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
const store = await backend.open();
const db: OpenDb = store.db;
const t = await createTestApp({ db });
await db.query(`UPDATE workspaces SET rpm_limit = 1000000 WHERE id = $1`, [t.workspaceId]);
await t.services.keys.ready();
const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] });

// Wall ms of each statement (by its prepared name, or its start), and how many ran, while `timing`.
const spent = new Map<string, number>();
const calls = new Map<string, number>();
let timing = false;
let unnamed = false; // the prepared mode's rounds without names
// Each timed statement's Date.now() before and after (the clock PGlite's clock_timestamp() reads, to the ms).
const stamps: { key: string; before: number; after: number }[] = [];
const query = db.query.bind(db);
db.query = (async (sql: string, params?: readonly unknown[], options?: { name?: string }) => {
  const start = performance.now();
  const before = Date.now();
  try {
    return await query(sql, params, unnamed ? undefined : options);
  } finally {
    const key = options?.name ?? sql.replace(/\s+/g, ' ').slice(0, 60);
    if (timing) spent.set(key, (spent.get(key) ?? 0) + performance.now() - start);
    if (timing) calls.set(key, (calls.get(key) ?? 0) + 1);
    if (timing) stamps.push({ key, before, after: Date.now() });
  }
}) as OpenDb['query'];

let address = 0;
async function invoke(): Promise<void> {
  const i = address++;
  const res = await t.app.request(
    '/v1/inference',
    { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body },
    { incoming: { socket: { remoteAddress: `198.51.${Math.floor(i / 250) % 250}.${i % 250}` } } },
  );
  if (res.status !== 200) throw new Error(`invocation answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

/** N invocations; wall ms per invocation of each statement, and CPU ms per invocation of the process. */
async function round(): Promise<{ statements: Map<string, number>; cpu: number; wall: number }> {
  spent.clear();
  calls.clear();
  stamps.length = 0;
  timing = true;
  const cpu = process.cpuUsage();
  const began = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < N) {
      next += 1;
      await invoke();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(cpu);
  timing = false;
  const wall = (performance.now() - began) / N;
  return { statements: new Map([...spent].map(([k, ms]) => [k, ms / N])), cpu: (used.user + used.system) / 1000 / N, wall };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (ms: number) => ms.toFixed(3).padStart(7);
for (let i = 0; i < 200; i += 1) await invoke(); // warm-up (plans cached, JIT)
// A workspace with a history: finished runs written directly, after the warm-up (so the cached plans are a new store's).
const EXTRA_RUNS = Number(process.env.BENCH_EXTRA_RUNS ?? 0);
if (EXTRA_RUNS > 0) {
  await query(
    `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, window_hour, window_day, created_at, updated_at)
     SELECT 'run_history' || n, $1, 'completed', 'orchestrator', 'finance', 'Sonata', 'api', $2, $2, $2, $2 FROM generate_series(1, $3::int) AS n`,
    [t.workspaceId, new Date('2026-05-01T00:00:00Z'), EXTRA_RUNS],
  );
}

// ---- ablation -------------------------------------------------------------------------------------

async function ablate(): Promise<void> {
  const fnDef = async (name: string) => ((await query(`SELECT pg_get_functiondef($1::regproc) AS d`, [name])) as { d: string }[])[0]!.d;
  const outbox = await fnDef('outbox_enqueue');
  const runCounts = ['runs_counted_insert', 'runs_counted_update', 'runs_count_flush_insert', 'runs_count_flush_update'];
  const variants: [string, string, string][] = [
    ['untouched', '', ''],
    [
      'run_counts triggers off',
      runCounts.map((n) => `ALTER TABLE runs DISABLE TRIGGER ${n};`).join(''),
      runCounts.map((n) => `ALTER TABLE runs ENABLE TRIGGER ${n};`).join(''),
    ],
    [
      'usage tally trigger off',
      'ALTER TABLE usage_periods DISABLE TRIGGER usage_period_updated;',
      'ALTER TABLE usage_periods ENABLE TRIGGER usage_period_updated;',
    ],
    ['outbox_enqueue a no-op', `CREATE OR REPLACE FUNCTION outbox_enqueue(p jsonb) RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$;`, outbox],
  ];
  const sums = new Map<string, { start: number; finish: number; cpu: number }[]>();
  for (let r = 1; r <= ROUNDS; r += 1) {
    for (const [name, apply, undo] of variants) {
      if (apply) await db.exec(apply);
      for (let i = 0; i < 50; i += 1) await invoke(); // re-plan after the change
      const { statements, cpu } = await round();
      if (undo) await db.exec(undo);
      const row = { start: statements.get('start_runs') ?? 0, finish: statements.get('finish_run') ?? 0, cpu };
      sums.set(name, [...(sums.get(name) ?? []), row]);
      say(`round ${r} ${name.padEnd(26)} start_runs ${fmt(row.start)}  finish_run ${fmt(row.finish)}  process CPU ${fmt(cpu)}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  say('median ms per invocation (wall, per statement; CPU of the process):');
  for (const [name, rows] of sums) {
    say(
      `  ${name.padEnd(26)} start ${fmt(median(rows.map((x) => x.start)))}  finish ${fmt(median(rows.map((x) => x.finish)))}  CPU ${fmt(median(rows.map((x) => x.cpu)))}`,
    );
  }
}

// ---- prepared statements ------------------------------------------------------------------------

/** The named statements (the money path's) prepared, as served, against the same statements run unnamed. */
async function comparePrepared(): Promise<void> {
  const rows: Record<string, number[][]> = { 'unnamed (parsed each time)': [], 'named prepared statements': [] };
  for (let r = 1; r <= ROUNDS; r += 1) {
    for (const [name, off] of [
      ['unnamed (parsed each time)', true],
      ['named prepared statements', false],
    ] as const) {
      unnamed = off;
      for (let i = 0; i < 50; i += 1) await invoke();
      const { statements, cpu } = await round();
      const row = [statements.get('start_runs') ?? 0, statements.get('finish_run') ?? 0, cpu];
      rows[name]!.push(row);
      say(`round ${r} ${name.padEnd(26)} start_runs ${fmt(row[0]!)}  finish_run ${fmt(row[1]!)}  process CPU ${fmt(row[2]!)}`);
    }
  }
  unnamed = false;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  say('median ms per invocation (wall, per statement; CPU of the process):');
  for (const [name, runs] of Object.entries(rows)) {
    say(
      `  ${name.padEnd(26)} start ${fmt(median(runs.map((x) => x[0]!)))}  finish ${fmt(median(runs.map((x) => x[1]!)))}  CPU ${fmt(median(runs.map((x) => x[2]!)))}`,
    );
  }
}

// ---- marks ----------------------------------------------------------------------------------------

/** Function → [text in its body, the label of the piece that starts there]; the first occurrence, or the last with `last`. */
const MARKS: Record<string, [anchor: string, label: string, last?: boolean][]> = {
  start_runs: [
    ['BEGIN', 'start: call of start_runs'],
    ['FOR i IN SELECT s.i FROM generate_subscripts(v_args, 1) AS s(i)', 'start_runs: idempotency, conversation checks'],
    ['FOR g IN SELECT', 'start_runs: adopted runs locked'],
    ['SELECT u.consumed_stu', 'start_runs: ensure_usage_period'],
    ['INSERT INTO usage_windows', 'start_runs: period row locked'],
    ['SELECT k.manual_since', 'start_runs: windows upsert + lock + read'],
    ['IF v_added > 0 THEN', 'start_runs: kill switch + decisions'],
    ['INSERT INTO runs', 'start_runs: reserve on period and windows'],
    ['IF v_claims > 0 THEN', 'start_runs: insert the runs'],
    ['RETURN to_jsonb(v_out)', 'start_runs: idempotency claims'],
    ['END\n$', 'start: return', true],
  ],
  finish_run: [
    ['BEGIN', 'finish: call of finish_runs'],
    ['END\n$', 'finish: return', true],
  ],
  finish_runs: [
    ['BEGIN', 'finish_runs: lock the runs'],
    ['v_closes := ARRAY(', 'finish_runs: decide the closes'],
    ['RETURN QUERY\n  WITH closed', 'finish_runs: update the runs'],
    ['INSERT INTO usage_ledger', 'finish_runs: ledger insert'],
    ['INSERT INTO run_steps', 'finish_runs: run_steps insert'],
    ['INSERT INTO tool_calls', 'finish_runs: tool_calls insert'],
    ['INSERT INTO drafts', 'finish_runs: drafts insert'],
    ['FOR v_thread IN', 'finish_runs: conversation turns'],
    ['PERFORM outbox_enqueue', 'finish_runs: events built'],
    ['INSERT INTO run_events', 'finish_runs: run_events insert'],
    ['PERFORM settle_runs', 'finish_runs: call of settle_runs', true],
  ],
  settle_runs: [
    ['BEGIN', 'settle_runs: periods (+ tally trigger)'],
    ['INSERT INTO usage_windows', 'settle_runs: windows upsert, lock, charge, trip'],
    ['END\n$', 'finish_runs: return the rows', true],
  ],
  outbox_enqueue: [
    ['BEGIN', 'outbox_enqueue: outbox_events insert'],
    ['INSERT INTO deliveries', 'outbox_enqueue: deliveries insert'],
    ['END\n$', 'finish_runs: after outbox_enqueue', true],
  ],
  usage_period_changed: [
    ['BEGIN', 'tally trigger: version'],
    ['PERFORM pg_notify', 'tally trigger: pg_notify'],
    ['RETURN NEW;\nEND', 'settle_runs: periods (+ tally trigger)', true],
  ],
  run_counts_note: [
    ['BEGIN', 'run_counts: changes of the statement summed'],
    ['RETURN NULL', 'after run_counts: summed', true],
  ],
  run_counts_flush: [
    ['BEGIN', 'run_counts: written (deferred, at commit)'],
    ['RETURN NULL', 'after run_counts: written (commit)', true],
  ],
};

async function marks(): Promise<void> {
  await db.exec(`CREATE TABLE bench_marks (n bigserial PRIMARY KEY, label text NOT NULL, at timestamptz NOT NULL);
    CREATE FUNCTION bench_mark(p text) RETURNS void LANGUAGE sql AS $$ INSERT INTO bench_marks (label, at) VALUES (p, clock_timestamp()) $$;
    CREATE FUNCTION bench_marks_back_to_back() RETURNS void LANGUAGE plpgsql AS $$
    BEGIN PERFORM bench_mark('first'); ${"PERFORM bench_mark('mark itself'); ".repeat(10)} END $$;`);
  for (const [fn, anchors] of Object.entries(MARKS)) {
    let def = ((await query(`SELECT pg_get_functiondef($1::regproc) AS d`, [fn])) as { d: string }[])[0]!.d;
    for (const [anchor, label, last] of anchors) {
      const at = last ? def.lastIndexOf(anchor.replace('$', '')) : def.indexOf(anchor);
      if (at < 0) throw new Error(`${fn}: no ${JSON.stringify(anchor)} in its body`);
      const mark = `PERFORM bench_mark('${label}');`;
      def = anchor === 'BEGIN' ? `${def.slice(0, at + 5)} ${mark}${def.slice(at + 5)}` : `${def.slice(0, at)}${mark} ${def.slice(at)}`;
    }
    await db.exec(def);
  }
  for (let i = 0; i < 50; i += 1) await invoke();
  const pieces = new Map<string, { ms: number; count: number }>(); // summed over the rounds
  const byRound: Map<string, number>[] = []; // each round's ms per invocation by piece (with its marks)
  const spans = new Map<string, number>(); // a statement's first mark to its last, summed
  const walls = new Map<string, number>();
  const edges = new Map<string, { before: number; after: number }>(); // the call to the first mark; the last mark to the answer
  for (let r = 0; r < ROUNDS; r += 1) {
    await query(`TRUNCATE bench_marks`);
    const { statements } = await round();
    for (const [k, ms] of statements) walls.set(k, (walls.get(k) ?? 0) + ms / ROUNDS);
    for (let i = 0; i < N; i += 1) await query(`SELECT bench_marks_back_to_back()`);
    const rows = (await query(`SELECT label, (extract(epoch FROM at) * 1000)::float8 AS ms FROM bench_marks ORDER BY n`)) as { label: string; ms: number }[];
    // The statements' first and last marks, in order, beside the statements timed from here (same order).
    const bounds: { first: number; last: number }[] = [];
    for (let i = 0; i < rows.length; i += 1) {
      if (/^(start|finish): call/.test(rows[i]!.label)) bounds.push({ first: rows[i]!.ms, last: rows[i]!.ms });
      else if (!/^(first|mark itself)/.test(rows[i]!.label) && bounds.length) bounds.at(-1)!.last = rows[i]!.ms;
    }
    const timed = stamps.filter((s) => s.key === 'start_runs' || s.key === 'finish_run');
    if (timed.length !== bounds.length) throw new Error(`${timed.length} statements timed, ${bounds.length} marked`);
    timed.forEach((s, i) => {
      const edge = edges.get(s.key) ?? { before: 0, after: 0 };
      edge.before += bounds[i]!.first - s.before;
      edge.after += s.after - bounds[i]!.last;
      edges.set(s.key, edge);
    });
    let statement = '';
    const thisRound = new Map<string, number>();
    byRound.push(thisRound);
    for (let i = 0; i + 1 < rows.length; i += 1) {
      const next = rows[i + 1]!.label;
      if (next.startsWith('first')) continue;
      if (/^(start|finish): call/.test(next)) {
        statement = next.split(':')[0]!; // the next statement's marks begin: no interval across statements
        continue;
      }
      const label = rows[i]!.label;
      const piece = pieces.get(label) ?? { ms: 0, count: 0 };
      piece.ms += rows[i + 1]!.ms - rows[i]!.ms;
      piece.count += 1;
      pieces.set(label, piece);
      thisRound.set(label, (thisRound.get(label) ?? 0) + (rows[i + 1]!.ms - rows[i]!.ms) / N);
      if (label !== 'mark itself' && label !== 'first') spans.set(statement, (spans.get(statement) ?? 0) + rows[i + 1]!.ms - rows[i]!.ms);
    }
  }
  const self = pieces.get('mark itself')!;
  const markCost = self.ms / self.count;
  say(`one mark costs ${fmt(markCost)} ms (taken out of each interval below)`);
  say(`statement wall ms per invocation (with marks): ${[...walls].map(([k, ms]) => `${k} ${fmt(ms)}`).join('; ')}`);
  say('ms per invocation by piece (mean of the quantised intervals, each less one mark):');
  const runs = ROUNDS * N;
  for (const [label, { ms, count }] of pieces) {
    if (label !== 'mark itself' && label !== 'first') say(`  ${fmt((ms - count * markCost) / runs)}  ${label}  (${(count / runs).toFixed(2)} per invocation)`);
  }
  say('by round (a piece that grows with the rows stored shows here):');
  for (const label of pieces.keys()) {
    if (label !== 'mark itself' && label !== 'first') say(`  ${byRound.map((m) => fmt(m.get(label) ?? 0)).join(' ')}  ${label}`);
  }
  for (const [statement, name] of [
    ['start', 'start_runs'],
    ['finish', 'finish_run'],
  ] as const) {
    say(`  ${fmt((walls.get(name) ?? 0) - (spans.get(statement) ?? 0) / runs)}  ${name}: outside the marks, of which`);
    say(`  ${fmt(edges.get(name)!.before / runs)}    from the call (Db.query) to the first mark (send, parse, bind, plan, call)`);
    say(`  ${fmt(edges.get(name)!.after / runs)}    from the last mark (the deferred trigger's end) to the answer (commit, rows back)`);
  }
}

// ---- run (after the declarations above) ----------------------------------------------------------

if (MODE === 'statements') {
  for (let r = 1; r <= ROUNDS; r += 1) {
    const { statements, cpu, wall } = await round();
    say(
      `round ${r}: wall ${fmt(wall)} ms/invocation, process CPU ${fmt(cpu)} ms/invocation; ${[...statements].map(([k, ms]) => `${k} ${fmt(ms)}`).join('; ')}`,
    );
    if (CONCURRENCY > 1) say(`  invocations per statement: ${[...calls].map(([k, n]) => `${k} ${(N / n).toFixed(1)}`).join('; ')}`);
  }
} else if (MODE === 'ablate') {
  await ablate();
} else if (MODE === 'prepared') {
  await comparePrepared();
} else if (MODE === 'marks') {
  await marks();
}
await t.close();
await store.cleanup();
