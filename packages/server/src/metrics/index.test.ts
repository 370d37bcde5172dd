/**
 * Metrics: requests by operationId and status, latency, in-flight, runs by status and alias, STU,
 * outbox depth and age, MCP bridge sessions, limiter refusals, the in-memory limiter's keys and backend errors, in Prometheus text; served on their own
 * listener. Labels carry no run id, no raw path and no secret.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createMetrics, METRICS_CONTENT_TYPE, type Metrics } from './index.ts';
import { startMetricsServer } from './server.ts';
import { createMemoryLimiter } from '../rate-limits/index.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The sample of `name` with exactly these labels (in the order prom-client writes them), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function appWithMetrics(limiter?: TestApp['services']['limiter']): Promise<{ t: TestApp; metrics: Metrics }> {
  const db = await openMemoryStore();
  const metrics = createMetrics({ db });
  t = await createTestApp({ db, deps: { metrics, ...(limiter ? { limiter } : {}) } });
  return { t, metrics };
}

describe('metrics', () => {
  it('count requests by operationId and status, time them, and show runs, STU and the outbox', async () => {
    const { t, metrics } = await appWithMetrics();
    const auth = { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' };
    const invoked = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(invoked.status).toBe(200);
    const { runId } = (await invoked.json()) as { runId: string };
    expect((await t.app.request(`/runs/${runId}`, { headers: auth })).status).toBe(200);
    expect((await t.app.request('/runs/run_doesNotExist0000000', { headers: auth })).status).toBe(404);
    expect((await t.app.request('/no/such/path/secret-ish')).status).toBe(404);

    const text = await metrics.render();
    expect(sample(text, 'service_http_requests_total', 'operation="createInference",status="200"')).toBe(1);
    expect(sample(text, 'service_http_requests_total', 'operation="getRun",status="200"')).toBe(1);
    expect(sample(text, 'service_http_requests_total', 'operation="getRun",status="404"')).toBe(1);
    expect(sample(text, 'service_http_requests_total', 'operation="unmatched",status="404"')).toBe(1);
    expect(sample(text, 'service_http_request_duration_seconds_count', 'operation="getRun"')).toBe(2);
    expect(sample(text, 'service_http_requests_in_flight')).toBe(0);
    expect(sample(text, 'service_runs', 'status="completed",alias="Sonata"')).toBe(1);
    expect(sample(text, 'service_stu_consumed', 'alias="Sonata"')).toBeGreaterThan(0);
    expect(sample(text, 'service_outbox_pending_deliveries')).toBe(0);
    expect(sample(text, 'service_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(sample(text, 'service_mcp_sessions', 'transport="sse"')).toBe(0);
    expect(sample(text, 'service_mcp_sessions', 'transport="streamable_http"')).toBe(0);
    // Bounded labels only: no run id, no raw path, no key.
    expect(text).not.toContain(runId);
    expect(text).not.toContain('/runs/');
    expect(text).not.toContain('secret-ish');
    expect(text).not.toContain(t.apiKey);
  });

  it('show the MCP bridge sessions open on this instance, by transport', async () => {
    const { t, metrics } = await appWithMetrics();
    const issued = await t.app.request('/v1/mcp/tenant/tokens', { method: 'POST', headers: { authorization: `Bearer ${await t.keyWith('mcp:tenant')}` } });
    const { token } = (await issued.json()) as { token: string };
    const initialize = () =>
      t.app.request('/v1/mcp/tenant', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18' } }),
      });
    const first = (await initialize()).headers.get('mcp-session-id')!;
    await initialize();
    expect(sample(await metrics.render(), 'service_mcp_sessions', 'transport="streamable_http"')).toBe(2);
    const ended = await t.app.request('/v1/mcp/tenant', { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': first } });
    expect(ended.status).toBe(204);
    const text = await metrics.render();
    expect(sample(text, 'service_mcp_sessions', 'transport="streamable_http"')).toBe(1);
    expect(sample(text, 'service_mcp_sessions', 'transport="sse"')).toBe(0);
    expect(text).not.toContain(first);
  });

  it('count limiter refusals and backend (Redis) failures', async () => {
    let calls = 0;
    const limiter = {
      async hit(_key: string, limit: number) {
        calls += 1;
        if (calls === 1) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
        return { allowed: false, limit, remaining: 0, resetAt: Math.ceil(Date.now() / 1000) + 60, retryAfterSec: 60 };
      },
    };
    const { t, metrics } = await appWithMetrics(limiter);
    expect((await t.app.request('/v1/agents')).status).toBe(503);
    expect((await t.app.request('/v1/agents')).status).toBe(429);
    const text = await metrics.render();
    expect(sample(text, 'service_backend_errors_total', 'backend="redis"')).toBe(1);
    expect(sample(text, 'service_rate_limit_refusals_total', 'limit="ip"')).toBe(1);
  });

  it("show the in-memory limiter's keys by class, and the live ones it dropped to make room", async () => {
    const db = await openMemoryStore();
    const metrics = createMetrics({ db });
    // Behind one proxy, so each request's forwarded address is its client's.
    t = await createTestApp({ db, deps: { metrics, config: { trustProxy: 1 } } });
    for (const address of ['10.1.0.1', '10.1.0.2', '10.1.0.3']) {
      const res = await t.app.request('/v1/agents', { headers: { authorization: `Bearer ${t.apiKey}`, 'x-forwarded-for': address } });
      expect(res.status).toBe(200);
    }
    const text = await metrics.render();
    expect(sample(text, 'service_rate_limit_keys', 'class="ip"')).toBe(3);
    expect(sample(text, 'service_rate_limit_keys', 'class="wksp"')).toBe(1);
    expect(sample(text, 'service_rate_limit_keys_evicted_total', 'class="ip"')).toBe(0);
    // Classes and counts only: no address, no workspace.
    expect(text).not.toContain('10.1.0.1');
    expect(text).not.toContain(t.workspaceId);

    // A limiter of 2 keys a class: 5 addresses within the minute drop 3 live ones, one more a 4th.
    const small = createMetrics({ db: t.db });
    const limiter = createMemoryLimiter({ maxKeys: 2 });
    small.observeLimiter(limiter);
    for (let i = 0; i < 5; i++) await limiter.hit(`ip:10.2.0.${i}`, 60, 60_000);
    expect(sample(await small.render(), 'service_rate_limit_keys_evicted_total', 'class="ip"')).toBe(3);
    await limiter.hit('ip:10.2.0.9', 60, 60_000);
    const again = await small.render();
    expect(sample(again, 'service_rate_limit_keys_evicted_total', 'class="ip"')).toBe(4);
    expect(sample(again, 'service_rate_limit_keys', 'class="ip"')).toBe(2);
  });

  it('count a request the store could not serve as a store error', async () => {
    const { t, metrics } = await appWithMetrics();
    const db = t.db as { query: (...args: unknown[]) => Promise<unknown> };
    const query = db.query;
    db.query = () => Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
    try {
      expect((await t.app.request('/runs', { headers: { authorization: `Bearer ${t.apiKey}` } })).status).toBe(503);
    } finally {
      db.query = query;
    }
    const text = await metrics.render();
    expect(sample(text, 'service_http_requests_total', 'operation="listRuns",status="503"')).toBe(1);
    expect(sample(text, 'service_backend_errors_total', 'backend="store"')).toBeGreaterThanOrEqual(1);
  });

  it('count a store that does not answer at scrape time as a store error', async () => {
    const metrics = createMetrics({
      db: { query: () => Promise.reject(new Error('down')), transaction: () => Promise.reject(new Error('down')), exec: async () => {} },
    });
    const text = await metrics.render();
    expect(sample(text, 'service_backend_errors_total', 'backend="store"')).toBe(4);
  });

  it('are served as Prometheus text on their own listener, and nothing else there', async () => {
    const metrics = createMetrics({ db: { query: async () => [], transaction: () => Promise.reject(new Error('unused')), exec: async () => {} } });
    metrics.deliveryAttempts.inc({ outcome: 'delivered' });
    const server = await startMetricsServer(metrics, '127.0.0.1', 0);
    try {
      const res = await fetch(server.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(METRICS_CONTENT_TYPE);
      const text = await res.text();
      expect(text).toContain('# TYPE service_http_requests_total counter');
      expect(sample(text, 'service_webhook_delivery_attempts_total', 'outcome="delivered"')).toBe(1);
      const other = await fetch(server.url.replace('/metrics', '/healthz'));
      expect(other.status).toBe(404);
      expect(await other.json()).toMatchObject({ error: 'not_found' });
    } finally {
      await server.close();
    }
  });
});
