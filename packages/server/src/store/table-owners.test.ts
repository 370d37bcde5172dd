/**
 * One module owns each table: the only statements that write a table (INSERT, UPDATE, DELETE,
 * TRUNCATE, MERGE) are in its owner's files; every other module calls the owner's exported
 * functions, passing its transaction. A module is a folder of `packages/server/src/`.
 *
 * The store's functions (`store/functions/<name>.sql`) are the one exception the architecture names: a
 * function of the money path writes tables of several owners in one statement. Each lists here the
 * tables it writes, and a write to another table fails as a write outside its owner does.
 *
 * The scan reads the non-test sources (and those function files) as text and relies on the codebase's convention of SQL
 * keywords in capitals and table names in lower case (`UPDATE runs SET …`), so `FOR UPDATE OF d`
 * and `DO UPDATE SET` are not writes and prose is not SQL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** Table → the module (folder under packages/server/src/) whose files alone write it. */
const TABLE_OWNERS: Record<string, string> = {
  api_key_revocations: 'domain/keys',
  api_keys: 'domain/keys',
  agent_definitions: 'domain/agents',
  approvals: 'domain/approvals',
  audit_events: 'domain/audit',
  conversation_turns: 'domain/runs',
  deliveries: 'domain/events',
  delivery_attempts: 'domain/events',
  drafts: 'domain/runs',
  idempotency_keys: 'domain/runs',
  inbound_events: 'domain/inbound-webhooks',
  inbound_webhooks: 'domain/inbound-webhooks',
  integrations: 'domain/integrations',
  kill_switches: 'domain/spending',
  login_attempts: 'domain/sessions',
  mcp_tokens: 'domain/mcp-tokens',
  memberships: 'domain/sessions',
  invitations: 'domain/sessions',
  account_resets: 'domain/sessions',
  operator_tokens: 'domain/operators',
  sso_settings: 'domain/sso',
  outbox_events: 'domain/events',
  paused_agents: 'domain/agents',
  run_counts: 'domain/runs',
  run_events: 'domain/run-events',
  run_steps: 'domain/runs',
  run_checkpoints: 'domain/runs',
  runs: 'domain/runs',
  schema_functions: 'store',
  schema_migrations: 'store',
  sessions: 'domain/sessions',
  tool_calls: 'domain/runs',
  usage_ledger: 'domain/spending',
  usage_periods: 'domain/spending',
  usage_windows: 'domain/spending',
  users: 'domain/sessions',
  webhook_destinations: 'domain/destinations',
  workspace_plans: 'domain/agents',
  workspaces: 'domain/workspaces',
};

/** Store function (`store/functions/<name>.sql`) → the tables it may write (the owner map's one exception). */
const FUNCTION_WRITES: Record<string, string[]> = {
  // domain/spending's: the period row of a month, created on first use with its rollover.
  ensure_usage_period: ['usage_periods'],
  // A lone close: finish_runs with a batch of one.
  finish_run: [],
  // domain/runs': the runs' rows, their ledger lines, steps, tool calls, drafts, conversation turns and event logs
  // (the events through outbox_enqueue, the settlement through settle_runs).
  finish_runs: ['runs', 'usage_ledger', 'run_steps', 'tool_calls', 'drafts', 'conversation_turns', 'run_events'],
  // domain/inbound-webhooks': the event (or its repeat's audit), its run, the webhook's last event time.
  ingest_inbound_event: ['inbound_events', 'runs', 'inbound_webhooks'],
  // domain/events': the event and its deliveries.
  outbox_enqueue: ['outbox_events', 'deliveries'],
  random_base62: [],
  // GET /runs's counters, kept by the triggers on runs the file declares.
  run_counts: ['run_counts'],
  // domain/spending's: the periods' reservations and charges, the windows' charges, reservations and trips.
  settle_runs: ['usage_periods', 'usage_windows'],
  // domain/spending's: the expired idempotency claims and the new ones, the windows' rows and reservations,
  // the periods' reservations, and the runs' rows (inserted, or inbound runs' adopted).
  start_runs: ['idempotency_keys', 'usage_windows', 'usage_periods', 'runs'],
  // The usage tally's trigger on usage_periods: it sets the row's version, and writes nothing.
  usage_period_changed: [],
};

interface TableWrite {
  table: string;
  /** Path relative to packages/server/src/. */
  file: string;
  line: number;
  statement: string;
}

const WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)/g;

/** Every write statement of one source text. */
function findWrites(file: string, source: string): TableWrite[] {
  return [...source.matchAll(WRITE)].map((m) => ({
    table: m[2]!,
    file,
    line: source.slice(0, m.index).split('\n').length,
    statement: m[1]!.replace(/\s+/g, ' '),
  }));
}

/** The problems of a set of writes against an owner map and the tables of the store. */
function ownershipProblems(writes: readonly TableWrite[], owners: Record<string, string>, tables: readonly string[]): string[] {
  const problems: string[] = [];
  for (const table of tables) if (!(table in owners)) problems.push(`${table}: no owner (add it to TABLE_OWNERS)`);
  for (const table of Object.keys(owners)) if (!tables.includes(table)) problems.push(`${table}: owned but not a table of generated/db.ts`);
  for (const write of writes) {
    const owner = owners[write.table];
    if (owner === undefined) problems.push(`${write.file}:${write.line}: ${write.statement} ${write.table}: not a table of generated/db.ts`);
    else if (!write.file.startsWith(`${owner}/`))
      problems.push(`${write.file}:${write.line}: ${write.statement} ${write.table} outside its owner ${owner}/ (call the owner's function instead)`);
  }
  return problems;
}

/** The problems of the store functions' writes: a function without an entry, a write its entry does not list. */
function functionProblems(writes: readonly TableWrite[], functions: readonly string[], allowed: Record<string, string[]>): string[] {
  const problems: string[] = [];
  for (const name of functions) if (!(name in allowed)) problems.push(`store/functions/${name}.sql: not in FUNCTION_WRITES (list the tables it writes)`);
  for (const write of writes) {
    const name = write.file.slice('store/functions/'.length, -'.sql'.length);
    if (!allowed[name]?.includes(write.table))
      problems.push(`${write.file}:${write.line}: ${write.statement} ${write.table}, which FUNCTION_WRITES does not list for ${name}`);
  }
  return problems;
}

/** The tables of the store, as generated/db.ts lists them. */
function generatedTables(dbTs: string): string[] {
  // The interface alone: the composite types of the functions' arguments (`Composites`) follow it.
  const start = dbTs.indexOf('export interface Tables {');
  const body = dbTs.slice(start, dbTs.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {2}([a-z_][a-z0-9_]*): \{$/gm)].map((m) => m[1]!);
}

const SRC = fileURLToPath(new URL('..', import.meta.url));
const FUNCTIONS = fileURLToPath(new URL('./functions/', import.meta.url));
const DB_TS = fileURLToPath(new URL('../../../../generated/db.ts', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('table owners', () => {
  const tables = generatedTables(readFileSync(DB_TS, 'utf8'));

  it('reads the tables of generated/db.ts', () => {
    expect(tables).toContain('runs');
    expect(tables).toContain('inbound_events');
    expect(tables.length).toBeGreaterThan(20);
  });

  it('every table has one owner, and only its owner writes it', () => {
    const writes = sourceFiles(SRC).flatMap((path) => findWrites(relative(SRC, path).split('\\').join('/'), readFileSync(path, 'utf8')));
    expect(writes.length).toBeGreaterThan(0);
    expect(ownershipProblems(writes, TABLE_OWNERS, tables)).toEqual([]);
  });

  it('each store function writes only the tables it lists, each of them a table of the store', () => {
    const files = readdirSync(FUNCTIONS).filter((f) => f.endsWith('.sql'));
    expect(files).toContain('finish_runs.sql');
    const writes = files.flatMap((file) => findWrites(`store/functions/${file}`, readFileSync(join(FUNCTIONS, file), 'utf8')));
    const names = files.map((file) => file.slice(0, -'.sql'.length));
    expect(functionProblems(writes, names, FUNCTION_WRITES)).toEqual([]);
    for (const [name, listed] of Object.entries(FUNCTION_WRITES)) {
      expect(names).toContain(name);
      for (const table of listed) expect(tables).toContain(table);
    }
    // A write the entry does not list fails; so does a function without an entry.
    const extra = findWrites('store/functions/finish_runs.sql', 'UPDATE usage_periods SET reserved_stu = 0;');
    expect(functionProblems(extra, ['finish_runs', 'unlisted_fn'], FUNCTION_WRITES)).toEqual([
      'store/functions/unlisted_fn.sql: not in FUNCTION_WRITES (list the tables it writes)',
      'store/functions/finish_runs.sql:1: UPDATE usage_periods, which FUNCTION_WRITES does not list for finish_runs',
    ]);
  });

  it('finds multi-line writes and ignores row locks and upserts', () => {
    const source = [
      'await tx.query(`UPDATE deliveries d SET locked_until = $2 FROM outbox_events e WHERE d.id = ANY ($1::text[])`);',
      'await tx.query(`SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE`);',
      'await tx.query(`SELECT d.id FROM deliveries d FOR UPDATE OF d SKIP LOCKED`);',
      'await tx.query(`INSERT INTO',
      '   runs (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = $1`);',
      'await tx.query(`DELETE FROM sessions WHERE id = $1`);',
    ].join('\n');
    expect(findWrites('x.ts', source).map((w) => `${w.line} ${w.statement} ${w.table}`)).toEqual([
      '1 UPDATE deliveries',
      '4 INSERT INTO runs',
      '6 DELETE FROM sessions',
    ]);
  });

  it('fails on a write outside the owner, on a table without owner, and on an owner of no table', () => {
    const writes = findWrites('worker/inbound-runs.ts', 'await db.query(`UPDATE inbound_events SET run_started_at = $2 WHERE id = $1`);');
    expect(ownershipProblems(writes, TABLE_OWNERS, tables)).toEqual([
      "worker/inbound-runs.ts:1: UPDATE inbound_events outside its owner domain/inbound-webhooks/ (call the owner's function instead)",
    ]);
    // The owner's own folder may write it; a sibling folder whose name starts the same may not.
    expect(ownershipProblems(findWrites('domain/inbound-webhooks/run-queue.ts', 'UPDATE inbound_events SET x = 1'), TABLE_OWNERS, tables)).toEqual([]);
    expect(ownershipProblems(findWrites('domain/runs-extra/x.ts', 'UPDATE runs SET x = 1'), TABLE_OWNERS, tables)).toHaveLength(1);

    const { runs: _, ...withoutRuns } = TABLE_OWNERS;
    expect(ownershipProblems([], withoutRuns, tables)).toEqual(['runs: no owner (add it to TABLE_OWNERS)']);
    expect(ownershipProblems([], { ...TABLE_OWNERS, gone: 'domain/runs' }, tables)).toEqual(['gone: owned but not a table of generated/db.ts']);
    expect(ownershipProblems(findWrites('domain/runs/x.ts', 'INSERT INTO runz (id) VALUES ($1)'), TABLE_OWNERS, tables)).toEqual([
      'domain/runs/x.ts:1: INSERT INTO runz: not a table of generated/db.ts',
    ]);
  });
});
