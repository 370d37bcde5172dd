/**
 * @module `pnpm bench` options and help.
 */
import { parseArgs } from 'node:util';

export const HELP = `Usage: pnpm bench [options]

Measures the real server (its compiled build, started with the CLI on a fresh store) against a bare
Hono baseline over loopback HTTP, in interleaved rounds, with the real limits on (TRUST_PROXY=1 and a
different X-Forwarded-For per request; the workspace's ceiling raised with \`workspaces update --rpm\`).
Stores: the embedded store, and PostgreSQL with Redis when DATABASE_URL and REDIS_URL are set (a fresh
database, dropped at the end, and Redis database BENCH_REDIS_DB, default 15).
Load: wrk when on PATH, else autocannon (BENCH_LOAD=wrk|autocannon chooses).

Scenarios: authenticated read (GET /usage/current), runs list (GET /runs?limit=20), sync invocation
(local engine; also at one connection, minus the engine's own time), streamed invocation (throughput;
time to the first SSE byte and to \`event: end\`), inbound signed events, outbound deliveries to a
loopback HTTPS receiver, start-up time to the first /healthz 200 (compiled and tsx), and with --soak
the server's RSS over a soak.

Against the gateway users would pick instead: a loopback OpenAI-compatible model server
(scripts/bench/upstream-server.ts), Portkey's gateway (@portkey-ai/gateway, installed on demand with npm
into ~/.cache/service-bench/portkey, or BENCH_PORTKEY_DIR; its rows are left out when it cannot be
installed), and this service's openai-compatible engine, all in front of that model server: sync and
streamed invocations at full load and at one connection (requests/s and the p50 added over the
upstream's, as ratios to Portkey's), after every side is warmed alike (5 s per mode at full load).
Beside them the bare proxy: a Hono app that only forwards the call on an undici pool
(scripts/bench/baseline-server.ts), the least a gateway costs here. And many long
streams: --slow-streams streamed requests for a model that answers after 300 ms and then streams 40
fragments a second for --slow-seconds, all open at once, directly, through Portkey and through the
service (in a workspace of its own): the first fragment's time over the upstream's, fragments lost, RSS
per open stream and CPU of the process in the path.

Fairness: workspace B sends sync invocations at 5/s and pings its webhook destination at 1/s alone, then
while workspace A floods (its ceiling raised; --fairness-flood concurrent sync invocations, --fairness-slow
slow bodies on its inbound slug from one address, and 5 destinations whose receiver answers after 9 s, kept
busy with pings): B's success rate and its p99 as a ratio of its p99 alone in the same run; B's deliveries
(arrived within the half + 15 s) and their latency from the ping's 202 to the receiver, the p99 as a ratio too.

Options:
  --duration S      seconds per round (default 8)
  --connections N   connections of the load generator (default 50)
  --rounds N        rounds of each scenario, each followed by a baseline round (default 3)
  --stores LIST     embedded,postgres (default: embedded, plus postgres when DATABASE_URL and REDIS_URL are set)
  --json FILE       also write the results as JSON (default bench-results.json in the current directory)
  --soak            add the RSS soak (10 minutes of mixed load on the embedded store)
  --soak-minutes M  length of the soak (default 10)
  --scenarios LIST  core,peer,governed,slow,workers,fairness,traces (default all but traces): core is
                    every scenario above the Portkey paragraph, peer the comparison with Portkey,
                    governed the same sync invocation from a workspace governed as a customer's (the
                    plan's quota, the kill switches, the limits, redaction) at each of
                    --governed-levels connections beside Portkey, and each side's best requests/s whose
                    p99 stays within --governed-p99 ms, slow the
                    many long streams, workers the sync invocation on \`serve --workers 2\` against one
                    process (PostgreSQL only; also the CPU per invocation of each, its server processes'
                    and PostgreSQL's from /proc: run it alone), fairness the two workspaces below,
                    traces (only when named) the sync invocation on a server sending its traces over
                    OTLP/HTTP to a loopback collector in the bench (OTEL_EXPORTER_OTLP_ENDPOINT, every
                    span sampled, batches every second) against the same server with traces off, per
                    store: requests/s, p50, the CPU ms per invocation of each server process, and the
                    spans the collector received per invocation
  --fairness-seconds S  length of each half of the fairness scenario (default 40: B's p99 over 200 invocations)
  --fairness-flood N    the flooding workspace's concurrent connections (default 400)
  --fairness-slow N     its slow inbound bodies from one address (default 1100, above MAX_REQUESTS_IN_FLIGHT)
  --governed-levels LIST  connections of the governed scenario's levels (default 1,4,16,64; 1,4 with --smoke)
  --governed-p99 MS       the p99 bound of its best level (default 50)
  --slow-streams N  concurrent slow streams (default 1000)
  --slow-seconds S  how long each slow stream lasts after its first fragment (default 10)
  --slow-ramp S     the slow streams start evenly over S seconds (default 5), then all are open
  --no-portkey      leave Portkey out (no install)
  --smoke           a short run that checks every scenario answers (2 s rounds, 4 connections, 1 round;
                    20 slow streams of 1 s over 0.5 s; fairness 2 s halves, 16 connections, 40 slow
                    bodies, fewer pings of A, and B must keep 99 % success and get every delivery while A
                    floods); prints "bench smoke: N passed, N failed" and
                    exits 1 on any failure (Portkey missing is not one). CI runs it.
  -h, --help        this text`;

export const SCENARIO_GROUPS = ['core', 'peer', 'governed', 'slow', 'workers', 'fairness', 'traces'] as const;
/** What runs without --scenarios: every group but traces (a cost measured when asked). */
const DEFAULT_SCENARIOS: readonly ScenarioGroup[] = SCENARIO_GROUPS.filter((group) => group !== 'traces');
export type ScenarioGroup = (typeof SCENARIO_GROUPS)[number];

export interface BenchOptions {
  seconds: number;
  scenarios: ScenarioGroup[];
  slow: { count: number; seconds: number; rampSeconds: number };
  fairness: { seconds: number; floodConnections: number; slowBodies: number; slowBacklog: number };
  governed: { levels: number[]; p99BoundMs: number };
  portkey: boolean;
  connections: number;
  rounds: number;
  stores: ('embedded' | 'postgres')[];
  json: string;
  soakMinutes: number | null;
  smoke: boolean;
}

export class BenchUsageError extends Error {}

function positive(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new BenchUsageError(`${flag} needs a positive number, got ${value}`);
  return n;
}

/** Parsed options, or null when --help was asked for. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      stores: { type: 'string' },
      json: { type: 'string' },
      soak: { type: 'boolean' },
      'soak-minutes': { type: 'string' },
      smoke: { type: 'boolean' },
      scenarios: { type: 'string' },
      'slow-streams': { type: 'string' },
      'slow-seconds': { type: 'string' },
      'slow-ramp': { type: 'string' },
      'fairness-seconds': { type: 'string' },
      'fairness-flood': { type: 'string' },
      'fairness-slow': { type: 'string' },
      'governed-levels': { type: 'string' },
      'governed-p99': { type: 'string' },
      'no-portkey': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) return null;
  const smoke = values.smoke === true;
  const withPostgres = Boolean(env.DATABASE_URL && env.REDIS_URL);
  const stores = (values.stores ?? (withPostgres ? 'embedded,postgres' : 'embedded')).split(',').map((s) => s.trim());
  for (const store of stores) if (store !== 'embedded' && store !== 'postgres') throw new BenchUsageError(`Unknown store ${store}: embedded or postgres.`);
  if (stores.includes('postgres') && !withPostgres) throw new BenchUsageError('The postgres store needs DATABASE_URL and REDIS_URL.');
  const scenarios = (values.scenarios ?? DEFAULT_SCENARIOS.join(',')).split(',').map((s) => s.trim());
  for (const group of scenarios)
    if (!(SCENARIO_GROUPS as readonly string[]).includes(group)) throw new BenchUsageError(`Unknown scenarios ${group}: ${SCENARIO_GROUPS.join(', ')}.`);
  return {
    scenarios: scenarios as ScenarioGroup[],
    slow: {
      count: Math.round(positive(values['slow-streams'], smoke ? 20 : 1000, '--slow-streams')),
      seconds: positive(values['slow-seconds'], smoke ? 1 : 10, '--slow-seconds'),
      rampSeconds: positive(values['slow-ramp'], smoke ? 0.5 : 5, '--slow-ramp'),
    },
    fairness: {
      seconds: positive(values['fairness-seconds'], smoke ? 2 : 40, '--fairness-seconds'),
      floodConnections: Math.round(positive(values['fairness-flood'], smoke ? 16 : 400, '--fairness-flood')),
      slowBodies: Math.round(positive(values['fairness-slow'], smoke ? 40 : 1100, '--fairness-slow')),
      // A's pings queued per slow destination beyond those its receiver holds: fewer in the short run.
      slowBacklog: smoke ? 2 : 8,
    },
    governed: {
      levels: (values['governed-levels'] ?? (smoke ? '1,4' : '1,4,16,64'))
        .split(',')
        .map((level) => Math.round(positive(level.trim(), 1, '--governed-levels'))),
      p99BoundMs: positive(values['governed-p99'], 50, '--governed-p99'),
    },
    portkey: values['no-portkey'] !== true,
    seconds: positive(values.duration, smoke ? 2 : 8, '--duration'),
    connections: Math.round(positive(values.connections, smoke ? 4 : 50, '--connections')),
    rounds: Math.round(positive(values.rounds, smoke ? 1 : 3, '--rounds')),
    stores: stores as BenchOptions['stores'],
    json: values.json ?? 'bench-results.json',
    soakMinutes: values.soak || values['soak-minutes'] !== undefined ? positive(values['soak-minutes'], 10, '--soak-minutes') : null,
    smoke,
  };
}
