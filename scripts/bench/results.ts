/**
 * @module The shapes of the benchmark's results: the table's rows, the probes, the soak, the rows
 * against Portkey, the many-long-streams runs and the targets (printed, and written as JSON).
 */
import type { LoadResult } from './load.ts';
import type { DeliveryRate, StreamTimings } from './probes.ts';
import type { StoreKind } from './processes.ts';
import type { Measured } from './rounds.ts';
import type { SlowStreamResult } from './slow-streams.ts';

export interface ScenarioResult {
  store: StoreKind;
  scenario: string;
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * What the scenario is compared with: bare Hono `GET` or `POST`, `Portkey` (→ the same upstream), or
   * `one process` (the same request on `serve --workers 1`, for `serve --workers 2`), or `traces off` (the same
   * request on the server without traces, for the one sending them to a loopback collector).
   */
  baseline: 'GET' | 'POST' | 'Portkey' | 'one process' | 'traces off' | null;
  baselineRps: number | null;
  baselineP50Ms: number | null;
  ratio: number | null;
  non2xx: number;
  errors: number;
  rounds: LoadResult[];
  baselineRounds: LoadResult[];
  /** The loopback model server measured directly in the same rounds (the `openai-compatible` scenarios). */
  upstream?: Measured;
  /** The bare proxy to it (peer.ts `BARE_PROXY`) in the same rounds (the `openai-compatible` scenarios). */
  bare?: Measured;
  /**
   * CPU ms per request of the server's processes and PostgreSQL's, and of its baseline's (the `workers` scenario;
   * the `openai-compatible` scenarios at full load, Portkey's process being the baseline's).
   */
  cpuMsPerRequest?: number;
  baselineCpuMsPerRequest?: number;
  /** The part of those of PostgreSQL's processes alone. */
  databaseCpuMsPerRequest?: number;
  baselineDatabaseCpuMsPerRequest?: number;
  /** PostgreSQL's write transactions per request (rounds.ts `databaseWritesPerRequest`), and its baseline's. */
  databaseWritesPerRequest?: number;
  baselineDatabaseWritesPerRequest?: number;
}

export interface StoreProbes {
  store: StoreKind;
  oneConnectionSyncP50Ms: number;
  engineP50Ms: number;
  overheadMs: number;
  stream: StreamTimings;
  deliveries: DeliveryRate;
}

export interface Soak {
  minutes: number;
  samples: { atSeconds: number; rssBytes: number }[];
  rssAfterFirstMinute: number;
  rssAtEnd: number;
  growth: number;
}

/** This service's `openai-compatible` engine against Portkey, both in front of the same loopback upstream. */
export interface PeerRow {
  store: StoreKind;
  mode: 'sync' | 'streamed';
  connections: number;
  serviceRps: number;
  portkeyRps: number | null;
  upstreamRps: number | null;
  /** This service's requests/s over Portkey's. */
  throughputRatio: number | null;
  /** p50 at one connection, and each gateway's addition over the upstream's own. */
  upstreamP50Ms: number | null;
  serviceP50Ms: number;
  portkeyP50Ms: number | null;
  serviceAddedMs: number | null;
  portkeyAddedMs: number | null;
  /** This service's added latency over Portkey's (1 = the same; lower is better). */
  latencyRatio: number | null;
  /**
   * CPU ms per invocation at full load: the service's processes and, on PostgreSQL, the database's (its share in
   * `serviceDatabaseCpuMs`); Portkey's process.
   */
  serviceCpuMs: number | null;
  serviceDatabaseCpuMs: number | null;
  /** PostgreSQL's write transactions per invocation at full load (a group-committed statement carries several runs). */
  serviceDatabaseWrites: number | null;
  portkeyCpuMs: number | null;
  /**
   * The bare proxy's (a Hono app forwarding the call on an undici pool, nothing else done): requests/s and CPU ms per
   * request at full load, p50 added over the upstream's at one connection. The least a gateway costs here.
   */
  bareRps: number | null;
  bareCpuMs: number | null;
  bareAddedMs: number | null;
}

/** One many-long-streams run; `store` is null for the upstream directly and for Portkey. */
export interface SlowStreamRun extends SlowStreamResult {
  store: StoreKind | null;
  /** First-fragment p50 and p99 over the upstream's own (measured directly in the same run). */
  addedFirstFragmentP50Ms: number | null;
  addedFirstFragmentP99Ms: number | null;
}

export interface Target {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}
