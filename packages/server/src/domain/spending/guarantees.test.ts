/**
 * The spending guarantees under concurrency, on PGlite and (with DATABASE_URL) on PostgreSQL, with
 * two app instances on two connections to the same store, as two processes behind a load balancer:
 * the quota's hard stop is never passed, a window trips only near its limit, a cancel releases the
 * reservation wherever the run executes, and a store failure while a run closes still ends the run
 * (and the stream with its closing event).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../app.ts';
import { parseSse } from '@service/testing/sse';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { setPlan } from '../agents/settings.ts';
import { PLANS } from '../../vocabulary/plans.ts';
import { DEFAULT_STU_RATES, hardstopStu, KILL_SWITCH_LIMITS, type KillSwitchLimits, type StuRates } from '../usage/index.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

describe.each(testBackends())('run guarantees on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let key: string;
  let apps: TestApp['app'][];

  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await t?.close();
    await store.cleanup();
  });

  async function twoInstances(deps: { stuRates?: StuRates; killSwitchLimits?: KillSwitchLimits; runLeaseMs?: number } = {}): Promise<void> {
    const shared = { ...deps, config: { trustProxy: 1 } };
    t = await createTestApp({ db: store.db, deps: shared });
    await subscribeToEveryEvent(t.db, t.workspaceId);
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
    const second = createApp({ db: await store.peer(), clock: t.clock, logError: () => {}, ...shared }).app;
    apps = [t.app, second];
  }

  async function invoke(i: number, body: Record<string, unknown>): Promise<Response> {
    return apps[i % 2]!.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': `10.1.${Math.floor(i / 200)}.${i % 200}` },
      body: JSON.stringify(body),
    });
  }

  async function held(): Promise<{ period: number; windows: number[] }> {
    const [period] = await store.db.query<{ reserved: number }>(`SELECT reserved_stu::float8 AS reserved FROM usage_periods`);
    const windows = await store.db.query<{ reserved: number }>(`SELECT reserved_stu::float8 AS reserved FROM usage_windows ORDER BY scope`);
    return { period: Number(period?.reserved ?? 0), windows: windows.map((w) => Number(w.reserved)) };
  }

  it('40 concurrent invocations never take consumption past the hard stop of a 2 M STU starter quota', async () => {
    await twoInstances({ stuRates: { ...DEFAULT_STU_RATES, Prelude: 2000 } });
    await setPlan(t.db, t.clock, t.workspaceId, 'starter');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        invoke(i, { alias: 'Prelude', agentSlug: 'sales', maxTokens: 100, messages: [{ role: 'user', content: `Follow up with lead ${i}` }] }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    // Refused by the quota itself, or (no run created) beside what the runs in progress hold.
    for (const res of answers.filter((r) => r.status === 429)) {
      const body = (await res.json()) as { error: string; policy?: string; message?: string };
      if (body.error === 'budget_reserved') expect(body).toMatchObject({ budget: 'quota', retryAfterSec: 5 });
      else {
        // At the hard stop; or below it, where the room left does not cover even this input (a capped output fitted the others).
        expect(body).toMatchObject({ error: 'quota_exceeded' });
        if (body.policy !== 'hardstop') expect(body.message).toMatch(/does not cover this request's input/);
      }
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    const usage = (await (await apps[1]!.request('/usage/current', { headers: { authorization: `Bearer ${key}` } })).json()) as {
      consumedStu: number;
      pctConsumed: number;
    };
    expect(usage.consumedStu).toBeLessThanOrEqual(hardstopStu(PLANS.starter.quotaStu));
    expect(usage.pctConsumed).toBeLessThanOrEqual(120);
    const [billed] = await store.db.query<{ stu: number; open: number }>(
      `SELECT coalesce(sum(stu), 0)::float8 AS stu, count(*) FILTER (WHERE status = 'in_progress')::int AS open FROM runs`,
    );
    expect(Number(billed!.stu)).toBe(usage.consumedStu);
    expect(billed!.open).toBe(0);
    expect(await held()).toEqual({ period: 0, windows: [0, 0] });
  });

  it('200 concurrent invocations near the hard stop: consumed plus reserved never passes it, sampled while they run', async () => {
    await twoInstances({ stuRates: { ...DEFAULT_STU_RATES, Prelude: 2000 } });
    await setPlan(t.db, t.clock, t.workspaceId, 'starter');
    const hardstop = hardstopStu(PLANS.starter.quotaStu);
    // A run's worst case is about 220,000 STU: about ten fit under the 2.4 M hard stop at once.
    let done = false;
    let highest = 0;
    let samples = 0;
    const sampler = (async () => {
      while (!done) {
        const [row] = await store.db.query<{ total: number }>(`SELECT (consumed_stu + reserved_stu)::float8 AS total FROM usage_periods`);
        highest = Math.max(highest, Number(row?.total ?? 0));
        samples += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        invoke(i + 1, { alias: 'Prelude', agentSlug: 'sales', maxTokens: 100, messages: [{ role: 'user', content: `Follow up with lead ${i}` }] }),
      ),
    );
    done = true;
    await sampler;
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(samples).toBeGreaterThan(0);
    expect(highest).toBeLessThanOrEqual(hardstop);
    const [period] = await store.db.query<{ consumed: number; reserved: number }>(
      `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods`,
    );
    expect(Number(period!.consumed)).toBeLessThanOrEqual(hardstop);
    expect(Number(period!.reserved)).toBe(0);
    const [billed] = await store.db.query<{ stu: number; open: number }>(
      `SELECT coalesce(sum(stu), 0)::float8 AS stu, count(*) FILTER (WHERE status = 'in_progress')::int AS open FROM runs`,
    );
    // The ledger, the period and the runs agree: every charged STU is a run's.
    expect(Number(billed!.stu)).toBe(Number(period!.consumed));
    expect(billed!.open).toBe(0);
    expect(await held()).toEqual({ period: 0, windows: [0, 0] });
  });

  it('under concurrency the hour switch trips within 1 % of its limit, not when reservations fill the window', async () => {
    const limits = { ...KILL_SWITCH_LIMITS, hour: 10_000 };
    await twoInstances({ killSwitchLimits: limits });
    let sent = 0;
    let tripped: Date | null = null;
    for (let round = 0; round < 40 && !tripped; round += 1) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, () => {
          sent += 1;
          return invoke(sent, {
            alias: 'Prelude',
            agentSlug: 'sales',
            maxTokens: 400,
            messages: [{ role: 'user', content: `Draft the renewal note ${sent}` }],
          });
        }),
      );
      for (const res of batch) expect([200, 429]).toContain(res.status);
      const [hour] = await store.db.query<{ tripped_at: Date | null }>(`SELECT tripped_at FROM usage_windows WHERE scope = 'hour'`);
      tripped = hour?.tripped_at ?? null;
    }
    expect(tripped).not.toBeNull();
    const [hour] = await store.db.query<{ spent: number; reserved: number }>(
      `SELECT spent_stu::float8 AS spent, reserved_stu::float8 AS reserved FROM usage_windows WHERE scope = 'hour'`,
    );
    expect(Number(hour!.spent)).toBeGreaterThanOrEqual(9_900);
    expect(Number(hour!.spent)).toBeLessThanOrEqual(10_000);
    expect(Number(hour!.reserved)).toBe(0);
    const refused = await invoke(sent + 1, { alias: 'Prelude', agentSlug: 'sales', maxTokens: 10, messages: [{ role: 'user', content: 'One more' }] });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch', kind: 'hour' });
  });

  it('a cancel on another instance releases the reservation at once and stops the engine there', async () => {
    await twoInstances({ runLeaseMs: 200 });
    const started = await t.services.runs.start({
      workspaceId: t.workspaceId,
      agentSlug: 'sales',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Call the lead back [[hang]]' }],
      source: 'api',
    });
    if (started.kind !== 'started') throw new Error(`expected a started run, got ${started.kind}`);
    expect((await held()).period).toBe(started.run.reservedStu);
    const executing = t.services.runs.execute(started.run);

    const res = await apps[1]!.request(`/runs/${started.run.runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: started.run.runId, status: 'canceled' });
    expect(await held()).toEqual({ period: 0, windows: [0, 0] });

    // The instance that runs it learns of the cancel at its next lease renewal and bills what was produced.
    const outcome = await executing;
    expect(outcome.run.status).toBe('canceled');
    const [hour] = await store.db.query<{ spent: number }>(`SELECT spent_stu::float8 AS spent FROM usage_windows WHERE scope = 'hour'`);
    expect(Number(hour!.spent)).toBe(outcome.run.usage.stu);
    expect(await held()).toEqual({ period: 0, windows: [0, 0] });
  });

  describe('a store failure while the run closes', () => {
    beforeEach(async () => {
      await twoInstances();
      // A real refusal by the store, at the first write of the closing transaction.
      await store.db.exec(`
        CREATE FUNCTION refuse_steps() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full at 10.0.0.7'; END $$;
        CREATE TRIGGER refuse_steps BEFORE INSERT ON run_steps FOR EACH ROW EXECUTE FUNCTION refuse_steps();
      `);
    });

    async function onlyRun(): Promise<{ status: string; failure_reason: string | null; reserved_stu: number }> {
      const rows = await store.db.query<{ status: string; failure_reason: string | null; reserved_stu: number }>(
        `SELECT status, failure_reason, reserved_stu FROM runs`,
      );
      expect(rows).toHaveLength(1);
      return rows[0]!;
    }

    it('a synchronous call answers 500 with its requestId and the run ends failed, its reservation released', async () => {
      const res = await invoke(0, { alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
      expect(res.status).toBe(500);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ error: 'internal_error', message: expect.any(String), requestId: res.headers.get('x-request-id') });
      expect(JSON.stringify(body)).not.toContain('10.0.0.7');
      expect(await onlyRun()).toEqual({ status: 'failed', failure_reason: 'internal_error', reserved_stu: 0 });
      expect(await held()).toEqual({ period: 0, windows: [0, 0] });
      const events = await store.db.query<{ type: string; data: { reason: string } }>(`SELECT type, data FROM outbox_events`);
      expect(events.map((e) => [e.type, e.data.reason])).toEqual([['run.failed', 'internal_error']]);
    });

    it('a stream ends with event: error, never silently, and the run ends failed', async () => {
      const res = await invoke(0, { alias: 'Sonata', stream: true, messages: [{ role: 'user', content: 'Which invoices are overdue?' }] });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = parseSse(await res.text());
      expect(events.at(-1)).toEqual({
        event: 'error',
        data: { error: 'internal_error', message: expect.any(String), runId: expect.stringMatching(/^run_/), requestId: res.headers.get('x-request-id') },
      });
      expect(events.slice(0, -1).every((e) => e.event === 'message')).toBe(true);
      expect(await onlyRun()).toEqual({ status: 'failed', failure_reason: 'internal_error', reserved_stu: 0 });
      expect(await held()).toEqual({ period: 0, windows: [0, 0] });
    });
  });
});
