/**
 * @module Prometheus metrics (prom-client), one registry per app. Served by `serve` on its own port
 * (`METRICS_PORT`), never on the public API. Labels are bounded: operationId (not the raw path), status
 * code, run status, model alias, delivery outcome, limit name, backend name, the in-memory limiter's class of
 * keys. No id, no address, no secret.
 *
 * Counters and histograms are updated as things happen; what lives in the store (runs by status and
 * alias, STU consumed, outbox depth and age) is read at each scrape, as are the admission's places, the MCP
 * bridge's sessions and the in-memory limiter's keys.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../store/db.ts';
import type { AdmissionSnapshot } from '../middleware/admission/shares.ts';
import type { KeyClassCount } from '../rate-limits/index.ts';

export interface Metrics {
  registry: Registry;
  requests: Counter<'operation' | 'status'>;
  duration: Histogram<'operation'>;
  inFlight: Gauge;
  deliveryAttempts: Counter<'outcome'>;
  limiterRefusals: Counter<'limit'>;
  /** Requests refused with 503 by the admission control, by the bound or share reached (see AdmissionSource). */
  admissionRefusals: Counter<'reason'>;
  backendErrors: Counter<'backend'>;
  /** Admission control's places and shares, read at each scrape (createApp hands them over). */
  observeAdmission(source: AdmissionSource): void;
  /** The MCP bridge's open sessions, read at each scrape (buildServices hands them over). */
  observeMcpSessions(source: McpSessionsSource): void;
  /** The in-memory rate limiter's keys, read at each scrape (buildServices hands it over when no Redis holds the limits). */
  observeLimiter(source: LimiterSource): void;
  /** The Prometheus text of every metric. */
  render(): Promise<string>;
}

/** What admission control tells the scrape (middleware/admission/shares.ts `snapshot`); no workspace id. */
export interface AdmissionSource {
  snapshot(): AdmissionSnapshot;
}

/** The open sessions of the tenant MCP bridge on this instance, by transport. */
export interface McpSessionsSource {
  sse(): number;
  streamableHttp(): number;
}

/** The in-memory rate limiter's classes of keys (rate-limits/memory-limiter.ts `classes`): code's prefixes, no client. */
export interface LimiterSource {
  classes(): readonly KeyClassCount[];
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `clock` dates the age of the oldest pending delivery (the system clock when absent). */
export function createMetrics(deps: { db: Db; clock?: Clock }): Metrics {
  const clock = deps.clock ?? systemClock;
  const registry = new Registry();
  const registers = [registry];
  const backendErrors = new Counter({
    name: 'service_backend_errors_total',
    help: 'Failed calls to a backing service (store: PostgreSQL/PGlite, redis).',
    labelNames: ['backend'],
    // Registered last (below), and read once the store reads of the same scrape ended, so their failures count.
    registers: [],
    async collect() {
      await Promise.allSettled([...reads]);
      reads.clear();
    },
  });
  const reads = new Set<Promise<void>>();
  /** Reads the store at scrape time; a store that does not answer counts as a store error. */
  const fromStore = (read: () => Promise<void>): Promise<void> => {
    const done = read().catch(() => {
      backendErrors.inc({ backend: 'store' });
    });
    reads.add(done);
    return done;
  };
  new Gauge({
    name: 'service_runs',
    help: 'Runs in the store by status and model alias.',
    labelNames: ['status', 'alias'],
    registers,
    async collect() {
      await fromStore(async () => {
        const rows = await deps.db.query<{ status: string; alias: string; n: number | string }>(
          `SELECT status, alias, count(*) AS n FROM runs GROUP BY status, alias`,
        );
        this.reset();
        for (const row of rows) this.set({ status: row.status, alias: row.alias }, Number(row.n));
      });
    },
  });
  new Gauge({
    name: 'service_stu_consumed',
    help: 'STU charged to ended runs, by model alias (all workspaces, since the store was created).',
    labelNames: ['alias'],
    registers,
    async collect() {
      await fromStore(async () => {
        const rows = await deps.db.query<{ alias: string; stu: number | string }>(`SELECT alias, COALESCE(sum(stu), 0) AS stu FROM runs GROUP BY alias`);
        this.reset();
        for (const row of rows) this.set({ alias: row.alias }, Number(row.stu));
      });
    },
  });
  new Gauge({
    name: 'service_outbox_pending_deliveries',
    help: 'Outbound deliveries waiting to be sent (pending).',
    registers,
    async collect() {
      await fromStore(async () => {
        const [row] = await deps.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`);
        this.set(Number(row?.n ?? 0));
      });
    },
  });
  new Gauge({
    name: 'service_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest pending outbound delivery, in seconds (0 when none).',
    registers,
    async collect() {
      await fromStore(async () => {
        const [row] = await deps.db.query<{ oldest: Date | string | null }>(`SELECT min(created_at) AS oldest FROM deliveries WHERE status = 'pending'`);
        const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
        this.set(oldest === undefined ? 0 : Math.max(0, (clock.now().getTime() - oldest) / 1000));
      });
    },
  });
  let admission: AdmissionSource | undefined;
  let mcpSessions: McpSessionsSource | undefined;
  let limiter: LimiterSource | undefined;
  new Gauge({
    name: 'service_rate_limit_keys',
    help: 'Keys the in-memory rate limiter tracks now, by class (ip, ip-admin, ip-mcp, ip-operator, wksp, inbound, …): at most 100,000 a class.',
    labelNames: ['class'],
    registers,
    collect() {
      for (const { name, keys } of limiter?.classes() ?? []) this.set({ class: name }, keys);
    },
  });
  /** What each class had evicted at the last scrape: the counter grows by the difference. */
  const evictedBefore = new Map<string, number>();
  new Counter({
    name: 'service_rate_limit_keys_evicted_total',
    help: "Live keys the in-memory rate limiter dropped to make room for new ones, by class: those clients' counts restarted (more clients than its bound; REDIS_URL holds any number).",
    labelNames: ['class'],
    registers,
    collect() {
      for (const { name, evicted } of limiter?.classes() ?? []) {
        const more = evicted - (evictedBefore.get(name) ?? 0);
        evictedBefore.set(name, evicted);
        this.inc({ class: name }, more);
      }
    },
  });
  new Gauge({
    name: 'service_mcp_sessions',
    help: 'Open sessions of the tenant MCP bridge on this instance, by transport: sse (open streams), streamable_http (Mcp-Session-Id sessions not yet ended or idle).',
    labelNames: ['transport'],
    registers,
    collect() {
      if (!mcpSessions) return;
      this.set({ transport: 'sse' }, mcpSessions.sse());
      this.set({ transport: 'streamable_http' }, mcpSessions.streamableHttp());
    },
  });
  new Gauge({
    name: 'service_admission_in_flight',
    help: 'Requests holding a place of MAX_REQUESTS_IN_FLIGHT, by party: authenticating (credential being verified), workspace, unauthenticated (by client address).',
    labelNames: ['party'],
    registers,
    collect() {
      if (!admission) return;
      const now = admission.snapshot();
      this.set({ party: 'authenticating' }, now.authenticating);
      this.set({ party: 'workspace' }, now.workspaces);
      this.set({ party: 'unauthenticated' }, now.unauthenticated);
    },
  });
  const admissionGauge = (name: string, help: string, read: (now: AdmissionSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (admission) this.set(read(admission.snapshot()));
      },
    });
  admissionGauge('service_admission_active_workspaces', 'Workspaces (and the operator) holding at least one place in flight.', (now) => now.activeWorkspaces);
  admissionGauge(
    'service_admission_workspaces_at_share',
    'Workspaces holding their whole fair share of requests in flight now.',
    (now) => now.workspacesAtShare,
  );
  admissionGauge('service_admission_addresses_at_share', 'Unauthenticated client addresses holding their whole share now.', (now) => now.addressesAtShare);
  admissionGauge(
    'service_admission_saturated',
    '1 while admission control refuses newcomers at MAX_REQUESTS_IN_FLIGHT (and for a second after); /readyz then fails with admission.',
    (now) => (now.saturated ? 1 : 0),
  );
  const metrics: Metrics = {
    registry,
    requests: new Counter({
      name: 'service_http_requests_total',
      help: 'HTTP requests by operationId (or unmatched) and status code.',
      labelNames: ['operation', 'status'],
      registers,
    }),
    duration: new Histogram({
      name: 'service_http_request_duration_seconds',
      help: 'Time to the response headers, by operationId (a stream counts until its headers).',
      labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    inFlight: new Gauge({ name: 'service_http_requests_in_flight', help: 'HTTP requests being answered now.', registers }),
    deliveryAttempts: new Counter({
      name: 'service_webhook_delivery_attempts_total',
      help: 'Outbound delivery attempts by outcome (delivered, retry, give_up).',
      labelNames: ['outcome'],
      registers,
    }),
    limiterRefusals: new Counter({
      name: 'service_rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit (ip, workspace, inbound).',
      labelNames: ['limit'],
      registers,
    }),
    admissionRefusals: new Counter({
      name: 'service_admission_refusals_total',
      help: 'Requests refused with 503 at once by admission control: in_flight (the hard bound), store_queue, workspace_share, unauthenticated_share, address_share.',
      labelNames: ['reason'],
      registers,
    }),
    backendErrors,
    observeAdmission(source) {
      admission = source;
    },
    observeMcpSessions(source) {
      mcpSessions = source;
    },
    observeLimiter(source) {
      limiter = source;
    },
    render: () => registry.metrics(),
  };
  registry.registerMetric(backendErrors);
  return metrics;
}
