/**
 * @module The processes the benchmark measures: the bare Hono baseline, the loopback model server
 * (upstream-server.ts), and the real service from
 * its compiled build (`node packages/server/dist/cli.js`, as `pnpm start` runs it) on a fresh
 * store: a temporary data directory for the embedded store, or a fresh PostgreSQL database (and a
 * Redis database of its own) so that it never touches what the tests use. The store is set up
 * with the CLI the way an operator would: `init`, an inbound webhook, an outbound destination on
 * the loopback receiver, then `serve`, and `workspaces update --rpm` raises the ceiling. Two aliases
 * are served by the `openai-compatible` engine on the loopback model server ({@link REMOTE_ALIASES}).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const COMPILED_CLI = join(ROOT, 'packages/server/dist/cli.js');
export const SOURCE_CLI = join(ROOT, 'packages/server/src/cli.ts');

/** A child process that printed `Listening on URL`. */
export interface Listening {
  child: ChildProcess;
  url: string;
  /** The last 20 kB it printed (for error messages). */
  output(): string;
  /** Resident set size in bytes, from /proc (Linux). */
  rss(): number | undefined;
  /** CPU time (user + system) in seconds, from /proc (Linux). */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** Spawns `command args` and resolves once it prints `Listening on URL`; rejects if it exits first. */
export function spawnListening(command: string, args: string[], env: NodeJS.ProcessEnv, limitMs = 60_000): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let listening = false;
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
      const match = listening ? null : /Listening on (\S+)/.exec(output);
      if (match) {
        listening = true;
        clearTimeout(timer);
        resolve(handle(child, match[1]!, () => output));
      }
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not listen within ${limitMs} ms: ${output}`));
    }, limitMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`${args.join(' ')} exited (${code ?? signal}) before listening: ${output}`));
    });
  });
}

/**
 * A spawned process that is ready once `ready()` resolves true (polled every 50 ms): for servers
 * that do not print `Listening on URL`. Rejects if it exits first or is not ready within `limitMs`.
 */
export async function watchListening(child: ChildProcess, url: string, label: string, limitMs: number, ready: () => Promise<boolean>): Promise<Listening> {
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${label} exited (${child.exitCode ?? child.signalCode}): ${output}`);
    if (await ready()) return handle(child, url, () => output);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${label} was not ready within ${limitMs} ms: ${output}`);
}

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** Every process's parent, command name and CPU seconds (user + system), from /proc (Linux); empty elsewhere. */
/**
 * Every process's CPU seconds so far (utime + stime) and those of its children that ended and were waited for
 * (cutime + cstime: a database backend that closed is counted in its postmaster's).
 */
function processTable(): { pid: number; ppid: number; comm: string; cpu: number; endedChildrenCpu: number }[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // After the command name: state is the 3rd field, ppid the 4th, utime the 14th, stime the 15th, cutime and cstime
      // the 16th and 17th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = (i: number) => Number(fields[i]);
      return [{ pid: Number(pid), ppid: Number(fields[1]), comm, cpu: (ticks(11) + ticks(12)) / USER_HZ, endedChildrenCpu: (ticks(13) + ticks(14)) / USER_HZ }];
    } catch {
      return []; // ended meanwhile
    }
  });
}

/**
 * CPU seconds used so far by PostgreSQL: its live processes, and through its postmaster's children's times the
 * backends that ended (a pool's idle connection closed between two readings would otherwise take its CPU with it).
 */
function postgresCpu(table: ReturnType<typeof processTable>): number {
  const postgres = table.filter((p) => p.comm === 'postgres');
  const pids = new Set(postgres.map((p) => p.pid));
  return postgres.reduce((sum, p) => sum + p.cpu + (pids.has(p.ppid) ? 0 : p.endedChildrenCpu), 0);
}

/** CPU seconds used so far by PostgreSQL's processes (its backends included, ended ones too); undefined without /proc. */
export function databaseCpuSeconds(): number | undefined {
  const table = processTable();
  return table.length === 0 ? undefined : postgresCpu(table);
}

/**
 * CPU seconds used so far by `root` and every process under it (`serve --workers N`: the primary and its
 * workers), and by the machine's PostgreSQL processes (its backends serve the benchmark's database; run the
 * benchmark alone). Undefined where /proc is missing.
 */
export function serviceAndDatabaseCpuSeconds(root: number | undefined): number | undefined {
  const table = processTable();
  if (root === undefined || table.length === 0) return undefined;
  const children = new Map<number, number[]>();
  for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const tree = new Set<number>();
  const walk = (pid: number) => {
    tree.add(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return table.filter((p) => tree.has(p.pid) && p.comm !== 'postgres').reduce((sum, p) => sum + p.cpu, 0) + postgresCpu(table);
}

function handle(child: ChildProcess, url: string, output: () => string): Listening {
  return {
    child,
    url,
    output,
    cpuSeconds() {
      try {
        // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime is 14th, stime 15th.
        const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
      } catch {
        return undefined;
      }
    },
    rss() {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return kb ? Number(kb[1]) * 1024 : undefined;
      } catch {
        return undefined;
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The bare Hono baseline; with `upstreamUrl`, also the bare proxy to that model server (baseline-server.ts). */
export function startBaseline(upstreamUrl?: string): Promise<Listening> {
  return spawnListening(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/baseline-server.ts')], {
    ...process.env,
    PORT: '0',
    ...(upstreamUrl ? { UPSTREAM_URL: upstreamUrl } : {}),
  });
}

/** How the loopback model server's `bench-slow` model streams (upstream-server.ts). */
export interface SlowModel {
  firstMs: number;
  rate: number;
  seconds: number;
}

/** The loopback OpenAI-compatible server; its Chat Completions base URL is `url` + `/v1`. */
export function startUpstream(slow: SlowModel): Promise<Listening> {
  return spawnListening(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/upstream-server.ts')], {
    ...process.env,
    PORT: '0',
    SLOW_FIRST_MS: String(slow.firstMs),
    SLOW_RATE: String(slow.rate),
    SLOW_SECONDS: String(slow.seconds),
  });
}

/**
 * The aliases the benchmark serves with the `openai-compatible` engine (the others stay on the local
 * engine): Symphony on the upstream's instant model, Sonata on its slow one. Both are in every plan.
 * The slow streams take Sonata, the cheaper one (3 STU a token against 10): each run reserves its
 * worst case in the workspace's hour window (10,000,000 STU, not an operator setting), and 1,000
 * concurrent runs must fit in it beside one another (they also send a `maxTokens` that fits the stream).
 */
export const REMOTE_ALIASES = { instant: 'Symphony', slow: 'Sonata' } as const;

function openAICompatibleEnv(upstreamUrl: string): NodeJS.ProcessEnv {
  return {
    ENGINE_SONATA: 'openai-compatible',
    ENGINE_SYMPHONY: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: `${upstreamUrl}/v1`,
    OPENAI_COMPATIBLE_MODEL_SYMPHONY: 'bench-instant',
    OPENAI_COMPATIBLE_MODEL_SONATA: 'bench-slow',
  };
}

export type StoreKind = 'embedded' | 'postgres';

export interface ServiceUnderTest extends Listening {
  store: StoreKind;
  apiKey: string;
  workspaceId: string;
  operatorToken: string;
  admin: { email: string; password: string; totpSecret: string };
  inbound: { slug: string; secret: string };
  destination: { id: string; secret: string };
  /** Drops the fresh database (PostgreSQL). */
  cleanup(): Promise<void>;
}

export interface ServiceOptions {
  store: StoreKind;
  /** The temporary directory of this run. */
  dir: string;
  /** https://127.0.0.1:PORT of the loopback receiver, and its certificate file. */
  receiverOrigin: string;
  receiverCaFile: string;
  /** The workspace's requests per minute (the raised ceiling). */
  rpm: number;
  /** The loopback model server the `openai-compatible` aliases ({@link REMOTE_ALIASES}) call. */
  upstreamUrl: string;
  /** Server processes (`serve --workers`); 1 unless the scenario measures more. */
  workers?: number;
  /** More environment for the server (the `traces` scenario's `OTEL_*`), and a name for its data directory. */
  env?: Readonly<Record<string, string>>;
  label?: string;
}

// pg is a dependency of packages/server; resolve it from there.
const fromServer = createRequire(join(ROOT, 'packages/server/package.json'));
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
}
async function pgClient(url: string): Promise<PgClient> {
  const pg = (await import(pathToFileURL(fromServer.resolve('pg')).href)) as { default: { Client: new (o: { connectionString: string }) => PgClient } };
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  return client;
}

/**
 * Write transactions begun so far in the whole PostgreSQL cluster of DATABASE_URL: the next transaction id to be
 * assigned (`pg_current_snapshot()`'s xmax). Only a transaction that writes takes an id, and the money path's functions
 * open no subtransaction, so the difference over a round counts the transactions that wrote: a group-committed start
 * or close is one, whatever number of runs it carries (an invocation alone takes two, its start and its close), and
 * the service's other writes. The bench runs alone. Undefined without DATABASE_URL.
 */
export async function databaseWriteTransactions(): Promise<number | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  const client = await pgClient(url);
  try {
    const result = (await client.query(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next`)) as { rows: { next: string }[] };
    return Number(result.rows[0]!.next);
  } finally {
    await client.end();
  }
}

/** A fresh database beside the one DATABASE_URL names, and its URL. */
async function freshDatabase(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = await pgClient(databaseUrl);
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const again = await pgClient(databaseUrl);
      try {
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}

/** REDIS_URL with its own database number (BENCH_REDIS_DB, default 15), so test keys are never touched. */
function benchRedisUrl(redisUrl: string): string {
  const url = new URL(redisUrl);
  url.pathname = `/${process.env.BENCH_REDIS_DB ?? '15'}`;
  return url.href;
}

/**
 * A new workspace of the running service (`workspaces create` over its operator API, on the enterprise plan, its
 * ceiling raised as the first one's, and its quota too unless `quotaStu` says `plan`): its API key. The peer scenarios take one each, so that none runs
 * into the hour's kill switch (10 M STU an hour per workspace, the spec's) that the ones before it spent: at
 * 1,000 invocations a second of 360 STU each, one workspace's hour is spent in under 30 s.
 */
export function freshWorkspace(service: Pick<ServiceUnderTest, 'url' | 'operatorToken'>, name: string, rpm: number, quotaStu = '1000000000000'): string {
  const remote = ['--url', service.url, '--operator-token', service.operatorToken];
  const run = (...args: string[]): string => {
    const result = spawnSync(process.execPath, [COMPILED_CLI, ...args, ...remote], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`service ${args[0]} ${args[1]} failed: ${result.stderr}`);
    return result.stdout;
  };
  const created = JSON.parse(run('workspaces', 'create', '--name', name, '--admin-email', `${name}@bench.example`, '--plan', 'enterprise', '--json')) as {
    workspaceId: string;
    apiKey: string;
  };
  run('workspaces', 'update', created.workspaceId, '--rpm', String(rpm), '--quota-stu', quotaStu);
  return created.apiKey;
}

/**
 * A side's `forRound` (rounds.ts) that sends each round with a new workspace's key (`freshWorkspace`, named `label` and
 * the round) over `headers`: a workspace's hour (the spec's kill switch, 10,000,000 STU) is spent in under 30 s at
 * 1,000 invocations a second, and a side whose invocations are refused measures its refusals.
 */
export function freshWorkspaceEachRound(service: Pick<ServiceUnderTest, 'url' | 'operatorToken'>, label: string, headers: Record<string, string>) {
  return (round: number) => ({ headers: { ...headers, authorization: `Bearer ${freshWorkspace(service, `${label}-${round}`, 1_000_000)}` } });
}

export async function startService(options: ServiceOptions): Promise<ServiceUnderTest> {
  const workers = options.workers ?? 1;
  const dataDir = join(options.dir, `data-${options.store}${workers > 1 ? `-workers-${workers}` : ''}${options.label ? `-${options.label}` : ''}`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (/^(ENGINE_|OPENAI_COMPATIBLE_|LOCAL_ENGINE_)/.test(name)) delete env[name];
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'OPERATOR_TOKEN', 'METRICS_PORT']) delete env[name];
  // Traces off unless the scenario turns them on (options.env).
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  Object.assign(env, {
    TRUST_PROXY: '1',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    // The loopback receiver's self-signed certificate, trusted the standard way; verification stays on.
    NODE_EXTRA_CA_CERTS: options.receiverCaFile,
    // The deliveries probe holds the receiver's answers while it queues a backlog (about 10 s).
    WEBHOOK_DELIVERY_TIMEOUT_MS: '60000',
    ...openAICompatibleEnv(options.upstreamUrl),
    ...options.env,
  });
  let database: { url: string; drop(): Promise<void> } | undefined;
  if (options.store === 'postgres') {
    const { DATABASE_URL, REDIS_URL } = process.env;
    if (!DATABASE_URL || !REDIS_URL) throw new Error('the PostgreSQL variant needs DATABASE_URL and REDIS_URL');
    database = await freshDatabase(DATABASE_URL);
    Object.assign(env, { DATABASE_URL: database.url, REDIS_URL: benchRedisUrl(REDIS_URL), SECRET_KEY: randomBytes(32).toString('base64url') });
  }
  const cli = (...args: string[]): string => {
    const result = spawnSync(process.execPath, [COMPILED_CLI, ...args, '--data-dir', dataDir], { cwd: ROOT, env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`service ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  try {
    const init = JSON.parse(cli('init', '--json')) as Pick<ServiceUnderTest, 'apiKey' | 'workspaceId' | 'operatorToken' | 'admin'>;
    const inbound = JSON.parse(
      cli('webhooks', 'inbound', 'create', '--slug', 'bench-events', '--rpm', '10000', '--agent', 'sales', '--alias', 'Prelude', '--json'),
    ) as ServiceUnderTest['inbound'];
    // Subscribed to an event the benchmark does not cause, so only its pings are delivered.
    const destination = JSON.parse(
      cli('webhooks', 'outbound', 'create', '--url', `${options.receiverOrigin}/hook`, '--events', 'integration.connected', '--json'),
    ) as ServiceUnderTest['destination'];
    // One server process unless asked: the ratios are per process (`--workers` is measured on its own).
    const server = await spawnListening(process.execPath, [COMPILED_CLI, 'serve', '--port', '0', '--workers', String(workers), '--data-dir', dataDir], env);
    const update = spawnSync(
      process.execPath,
      [
        COMPILED_CLI,
        'workspaces',
        'update',
        init.workspaceId,
        '--rpm',
        String(options.rpm),
        '--quota-stu',
        '1000000000000',
        '--url',
        server.url,
        '--operator-token',
        init.operatorToken,
      ],
      { cwd: ROOT, env, encoding: 'utf8' },
    );
    if (update.status !== 0) {
      await server.stop();
      throw new Error(`workspaces update failed: ${update.stderr}`);
    }
    return {
      ...server,
      ...init,
      store: options.store,
      inbound,
      destination,
      async cleanup() {
        await database?.drop();
      },
    };
  } catch (err) {
    await database?.drop();
    throw err;
  }
}
