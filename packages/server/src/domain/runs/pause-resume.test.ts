/**
 * Approvals pause a run and resume it, on PGlite and (with DATABASE_URL) on PostgreSQL: the pause settles what was
 * spent so far and holds nothing; the decision (POST /approvals/{id}/decision) or the expiry makes the run
 * resumable; one claim resumes it and reserves its budget again with a start's rules (a kill switch or the quota
 * refuses it: the run fails with that reason); the final close charges only what the pause did not; the sweeper
 * leaves a waiting run alone and makes a resumed run whose instance died resumable again, its `calling` call
 * `unknown`. The resumer hears a decision taken on another instance.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../app.ts';
import { zRunDetail, zRunEvent } from '../../../../../generated/zod.ts';
import { parseSseWithIds } from '@service/testing/sse';
import { moneySums, testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { caller } from '@service/testing/panel-sessions';
import { setManualKillSwitch } from '../spending/budget.ts';
import { DEFAULT_STU_RATES, stuForRun } from '../usage/index.ts';
import { startResumer } from '../../worker/resumer.ts';
import { sweepInterruptedRuns } from './recovery.ts';
import type { ClaimOutcome, PendingRun, Resumption } from './service.ts';
import { APPROVAL_TTL_MS, NOT_PERFORMED, type StepDraft } from './steps.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

const LEASE_MS = 5_000;
const USED = { inputTokens: 120, outputTokens: 40 };
const AFTER = { inputTokens: 300, outputTokens: 80 };
const LOOP_STATE = { messages: [{ role: 'user', content: 'Send the renewal email to Dana' }], steps: 2, usage: USED };

describe.each(testBackends())('approvals pause and resume runs on $name', ({ name, open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeEach(async () => {
    store = await open();
    t = await createTestApp({ db: store.db, deps: { runLeaseMs: LEASE_MS } });
    await subscribeToEveryEvent(t.db, t.workspaceId);
  });
  afterEach(async () => {
    await t.close();
    await store.cleanup();
  });

  async function start(services = t.services): Promise<PendingRun> {
    const started = await services.runs.start({
      workspaceId: t.workspaceId,
      agentSlug: 'sales',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Send the renewal email to Dana' }],
      source: 'api',
    });
    if (started.kind !== 'started') throw new Error(started.kind);
    return started.run;
  }

  async function pause(run: PendingRun, services = t.services, steps: StepDraft[] = []) {
    const paused = await services.runs.pause({
      run,
      usage: USED,
      approval: { action: 'email.send', summary: 'Send the renewal email to Dana Whitfield.' },
      call: { id: 'call_1', name: 'email.send', arguments: { to: 'dana@example.com' } },
      loopState: LOOP_STATE,
      next: { inputTokens: 200, desiredOutput: 300 },
      log: [],
      steps,
      firstStepIndex: 0,
    });
    if (paused.kind !== 'waiting') throw new Error(paused.kind);
    return paused;
  }

  async function decide(approvalId: string, decision: 'approved' | 'rejected', app = t) {
    const admin = await app.login();
    return caller(app)(admin, 'POST', `/approvals/${approvalId}/decision`, { decision });
  }

  const money = () => moneySums(store.db);

  async function runRow(runId: string) {
    const [row] = await store.db.query<{ status: string; failure_reason: string | null; started_at: Date | null; lease_until: Date | null }>(
      `SELECT status, failure_reason, started_at, lease_until FROM runs WHERE id = $1`,
      [runId],
    );
    return row!;
  }

  async function getRun(runId: string, app = t) {
    const res = await app.app.request(`/runs/${runId}`, { headers: { authorization: `Bearer ${app.apiKey}` } });
    expect(res.status).toBe(200);
    return zRunDetail.parse(await res.json()).run;
  }

  function resumed(outcome: ClaimOutcome | undefined): Resumption {
    if (outcome?.kind !== 'resumed') throw new Error(`not resumed: ${JSON.stringify(outcome)}`);
    return outcome.resumption;
  }

  /** The continuation's run, as the agent loop builds it from the resumption. */
  function continuation(original: PendingRun, r: Resumption): PendingRun {
    const { reservation } = r;
    return {
      ...original,
      createdAt: reservation.startedAt,
      windows: reservation.windows,
      reservedStu: reservation.reservedStu,
      inputTokens: reservation.inputTokens,
      outputCap: reservation.outputCap,
      limitedBy: reservation.limitedBy,
      quotaStu: reservation.quotaStu,
      steps: [],
    };
  }

  async function closeResumed(run: PendingRun, services = t.services) {
    return services.runs.close(run, { reason: null, canceled: false, crossed: null, usage: AFTER, reported: AFTER, content: 'Sent.', steps: [], log: [] });
  }

  const sweep = () => sweepInterruptedRuns({ db: store.db, clock: t.clock, limits: t.services.budget.limits });
  const claim = (instance = 'a') => t.services.runs.claimResumption(instance);
  const stuOf = (usage: typeof USED) => stuForRun({ alias: 'Sonata', ...usage }, DEFAULT_STU_RATES);

  it('a pause settles what was spent so far, holds nothing, and shows the run waiting; the sweeper leaves it alone', async () => {
    const run = await start();
    expect((await money()).reserved).toBeGreaterThan(0);
    const paused = await pause(run);

    const charged = stuOf(USED);
    expect(charged).toBeGreaterThan(0);
    expect(await money()).toEqual({ ledger: charged, period: charged, runs: charged, reserved: 0 });
    expect(await runRow(run.runId)).toMatchObject({ status: 'in_progress', started_at: null, lease_until: null });

    const shown = await getRun(run.runId);
    expect(shown).toMatchObject({ status: 'in_progress', usage: { ...USED, stu: charged } });
    expect(shown.waitingFor).toEqual({
      id: paused.waitingFor.id,
      action: 'email.send',
      summary: 'Send the renewal email to Dana Whitfield.',
      expiresAt: new Date(t.clock.now().getTime() + APPROVAL_TTL_MS).toISOString(),
    });
    const approvals = await caller(t)(await t.login(), 'GET', '/approvals');
    expect(approvals.status).toBe(200);
    expect((approvals.body as { data: { id: string; runId: string; status: string }[] }).data).toEqual([
      expect.objectContaining({ id: paused.waitingFor.id, runId: run.runId, status: 'pending' }),
    ]);
    const created = await store.db.query<{ type: string }>(`SELECT type FROM outbox_events WHERE type = 'approval.created'`);
    expect(created).toHaveLength(1);

    // Long past its old lease: not swept, still waiting; nothing to resume before a decision.
    t.clock.advance(LEASE_MS * 10);
    expect(await sweep()).toEqual({ failed: 0, retried: 0 });
    expect(await runRow(run.runId)).toMatchObject({ status: 'in_progress' });
    expect(await claim()).toBeUndefined();
  });

  it('the decision makes the run resumable once: the budget is reserved again, the close charges only the rest, the log tells it all', async () => {
    const run = await start();
    const paused = await pause(run);
    const decided = await decide(paused.waitingFor.id, 'approved');
    expect(decided.status).toBe(200);

    const r = resumed(await claim('a'));
    expect(r.decision.status).toBe('approved');
    expect(r.checkpoint).toMatchObject({
      loopState: LOOP_STATE,
      call: { id: 'call_1', name: 'email.send', arguments: { to: 'dana@example.com' }, status: 'approved' },
    });
    expect(r.reservation.reservedStu).toBeGreaterThan(0);
    expect((await money()).reserved).toBe(r.reservation.reservedStu * 4); // period, day, hour, run
    expect(await claim('b')).toBeUndefined();
    expect((await getRun(run.runId)).waitingFor).toBeUndefined();

    // The approved call: `calling` once, before it is made; then its outcome.
    expect(await t.services.runs.beginApprovedCall(r.checkpoint)).toBe(true);
    expect(await t.services.runs.beginApprovedCall(r.checkpoint)).toBe(false);
    expect(await t.services.runs.endApprovedCall(r.checkpoint, { status: 'completed', result: 'Sent to dana@example.com' })).toBe(true);

    const closed = await closeResumed(continuation(run, r));
    expect(closed.status).toBe('completed');
    const total = stuOf(USED) + stuOf(AFTER);
    expect(await money()).toEqual({ ledger: total, period: total, runs: total, reserved: 0 });
    expect(await store.db.query(`SELECT stu FROM usage_ledger ORDER BY stu`)).toHaveLength(2);
    expect((await getRun(run.runId)).usage).toEqual({
      inputTokens: USED.inputTokens + AFTER.inputTokens,
      outputTokens: USED.outputTokens + AFTER.outputTokens,
      stu: total,
    });

    const res = await t.app.request(`/runs/${run.runId}/events`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
    const events = parseSseWithIds(await res.text()).map((e) => zRunEvent.parse(e.data));
    expect(events.map((e) => e.type)).toEqual([
      'run.created',
      'run.routed',
      'approval.requested',
      'approval.decided',
      'run.resumed',
      'run.usage',
      'run.completed',
    ]);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(events[2]).toMatchObject({ approvalId: paused.waitingFor.id, expiresAt: paused.waitingFor.expiresAt });
    expect(events[3]).toMatchObject({ approvalId: paused.waitingFor.id, decision: 'approved' });
  });

  it('a reader of a waiting run gets what was stored, then follows it through the resume to its end', async () => {
    const run = await start();
    const paused = await pause(run);
    const res = await t.app.request(`/runs/${run.runId}/events`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    while (!raw.includes('event: approval.requested')) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    expect(raw).toContain('event: approval.requested');
    await decide(paused.waitingFor.id, 'approved');
    const r = resumed(await claim());
    await closeResumed(continuation(run, r));
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    const events = parseSseWithIds(raw).map((e) => zRunEvent.parse(e.data));
    expect(events.map((e) => e.type)).toEqual([
      'run.created',
      'run.routed',
      'approval.requested',
      'approval.decided',
      'run.resumed',
      'run.usage',
      'run.completed',
    ]);
  });

  it('two concurrent decisions: one wins, and the run resumes with it', async () => {
    const run = await start();
    const paused = await pause(run);
    const admin = await t.login();
    const call = caller(t);
    const [first, second] = await Promise.all([
      call(admin, 'POST', `/approvals/${paused.waitingFor.id}/decision`, { decision: 'approved' }),
      call(admin, 'POST', `/approvals/${paused.waitingFor.id}/decision`, { decision: 'rejected' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const winner = (first.status === 200 ? first : second).body as { status: string };
    const r = resumed(await claim());
    expect(r.decision.status).toBe(winner.status);
    expect(r.checkpoint.call.status).toBe(winner.status);
  });

  it('two concurrent claims on two connections: one resume', async () => {
    const run = await start();
    const paused = await pause(run);
    await decide(paused.waitingFor.id, 'approved');
    const second = createApp({ db: await store.peer(), clock: t.clock, logError: () => {}, runLeaseMs: LEASE_MS });
    const outcomes = await Promise.all([claim('a'), second.services.runs.claimResumption('b'), claim('c')]);
    expect(outcomes.filter((o) => o?.kind === 'resumed')).toHaveLength(1);
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(2);
    const [row] = await store.db.query<{ claimed_by: string }>(`SELECT claimed_by FROM run_checkpoints`);
    expect(['a', 'b', 'c']).toContain(row!.claimed_by);
  });

  it('a manual kill switch at the resume fails the run with its reason and run.failed', async () => {
    const run = await start();
    // The approval's step, as the loop records it: its call waits for the decision.
    const paused = await pause(run, t.services, [
      {
        kind: 'approval',
        agentSlug: run.answeredBy,
        summary: 'Send the renewal email to Dana Whitfield.',
        toolCall: { name: 'email.send', arguments: { to: 'dana@example.com' }, result: null, status: 'pending_approval' },
      },
    ]);
    await setManualKillSwitch(store.db, t.workspaceId, true, t.clock.now());
    await decide(paused.waitingFor.id, 'approved');
    expect(await claim()).toEqual({ kind: 'refused', runId: run.runId, reason: 'kill_switch:manual' });
    expect(await runRow(run.runId)).toMatchObject({ status: 'failed', failure_reason: 'kill_switch:manual' });
    const failed = await store.db.query<{ data: { reason: string } }>(`SELECT data FROM outbox_events WHERE type = 'run.failed'`);
    expect(failed.map((e) => e.data.reason)).toEqual(['kill_switch:manual']);
    // The approved call was never made, and its record says so (not `pending_approval` on a failed run).
    const calls = await store.db.query<{ status: string; result: string | null }>(`SELECT status, result FROM tool_calls WHERE run_id = $1`, [run.runId]);
    expect(calls).toEqual([{ status: 'failed', result: NOT_PERFORMED }]);
    // What the pause charged stays charged, once; nothing is held.
    const charged = stuOf(USED);
    expect(await money()).toEqual({ ledger: charged, period: charged, runs: charged, reserved: 0 });
    expect(await claim()).toBeUndefined();
  });

  it('the quota spent at the resume fails the run with quota_exceeded', async () => {
    const run = await start();
    const paused = await pause(run);
    await store.db.query(`UPDATE usage_periods SET consumed_stu = 1e12`);
    await decide(paused.waitingFor.id, 'approved');
    expect(await claim()).toEqual({ kind: 'refused', runId: run.runId, reason: 'quota_exceeded' });
    expect(await runRow(run.runId)).toMatchObject({ status: 'failed', failure_reason: 'quota_exceeded' });
  });

  it('an approval nobody decides expires: the run resumes on the rejected path, the call never made', async () => {
    const run = await start();
    const paused = await pause(run);
    t.clock.advance(APPROVAL_TTL_MS - 1);
    expect(await claim()).toBeUndefined();
    t.clock.advance(1);
    const r = resumed(await claim());
    expect(r.decision).toEqual({ status: 'expired', decidedBy: null });
    expect(r.checkpoint.call.status).toBe('expired');
    expect(await t.services.runs.beginApprovedCall(r.checkpoint)).toBe(false);
    const [approval] = await store.db.query<{ status: string }>(`SELECT status FROM approvals WHERE id = $1`, [paused.waitingFor.id]);
    expect(approval!.status).toBe('expired');
  });

  it('a restart while waiting: a new app on the same store shows the run waiting and resumes it', async () => {
    const run = await start();
    const paused = await pause(run);
    // The old app is gone (nothing of it is used again); a new one opens the same store.
    const restarted = createApp({ db: store.db, clock: t.clock, logError: () => {}, runLeaseMs: LEASE_MS });
    const shown = await restarted.app.request(`/runs/${run.runId}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(shown.status).toBe(200);
    expect(zRunDetail.parse(await shown.json()).run).toMatchObject({ status: 'in_progress', waitingFor: { id: paused.waitingFor.id } });
    const admin = await t.login();
    const decided = await restarted.app.request(`/approvals/${paused.waitingFor.id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookie, 'x-csrf-token': admin.csrfToken },
      body: JSON.stringify({ decision: 'approved' }),
    });
    expect(decided.status).toBe(200);
    const r = resumed(await restarted.services.runs.claimResumption('restarted'));
    expect(r.run.id).toBe(run.runId);
    expect(r.checkpoint.loopState).toEqual(LOOP_STATE);
    expect(r.decision.status).toBe('approved');
  });

  it('a call left `calling` by an instance that died is `unknown`: the run is resumable again, the call never made again', async () => {
    const run = await start();
    const paused = await pause(run);
    await decide(paused.waitingFor.id, 'approved');
    const r = resumed(await claim('a'));
    expect(await t.services.runs.beginApprovedCall(r.checkpoint)).toBe(true);
    // Instance a dies during the call: its lease runs out.
    t.clock.advance(LEASE_MS);
    expect(await sweep()).toEqual({ failed: 0, retried: 1 });
    expect(await runRow(run.runId)).toMatchObject({ status: 'in_progress', started_at: null, lease_until: null });
    expect((await money()).reserved).toBe(0);
    const again = resumed(await claim('b'));
    expect(again.checkpoint.call.status).toBe('unknown');
    expect(again.decision.status).toBe('approved');
    expect(await t.services.runs.beginApprovedCall(again.checkpoint)).toBe(false);
    expect(again.lastSequence).toBeGreaterThan(r.lastSequence);
    const closed = await closeResumed(continuation(run, again));
    expect(closed.status).toBe('completed');
    const total = stuOf(USED) + stuOf(AFTER);
    expect(await money()).toEqual({ ledger: total, period: total, runs: total, reserved: 0 });
  });

  it('the resumer hears the decision and calls the continuation once', async () => {
    const run = await start();
    const paused = await pause(run);
    let heard!: (r: Resumption) => void;
    const resumption = new Promise<Resumption>((resolve) => (heard = resolve));
    const calls: Resumption[] = [];
    // Polling once an hour: only the notification brings the claim.
    const resumer = await startResumer({
      db: store.db,
      claim: () => t.services.runs.claimResumption('resumer'),
      resume: async (r) => {
        calls.push(r);
        await closeResumed(continuation(run, r));
        heard(r);
      },
      pollMs: 3_600_000,
    });
    try {
      await resumer.idle();
      expect(calls).toHaveLength(0);
      expect((await decide(paused.waitingFor.id, 'approved')).status).toBe(200);
      expect((await resumption).run.id).toBe(run.runId);
      await resumer.idle();
      expect(calls).toHaveLength(1);
      expect((await runRow(run.runId)).status).toBe('completed');
    } finally {
      await resumer.stop();
    }
  });

  it.skipIf(name !== 'postgres')('a decision taken on instance B resumes there the run instance A paused', async () => {
    const peer = await store.peer();
    const b = createApp({ db: peer, clock: t.clock, logError: () => {}, runLeaseMs: LEASE_MS });
    const run = await start();
    const paused = await pause(run);
    let heard!: (r: Resumption) => void;
    const resumption = new Promise<Resumption>((resolve) => (heard = resolve));
    const resumer = await startResumer({
      db: peer,
      claim: () => b.services.runs.claimResumption('b'),
      resume: async (r) => {
        await closeResumed(continuation(run, r), b.services);
        heard(r);
      },
      pollMs: 3_600_000,
    });
    try {
      await resumer.idle();
      const admin = await t.login();
      const res = await b.app.request(`/approvals/${paused.waitingFor.id}/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: admin.cookie, 'x-csrf-token': admin.csrfToken },
        body: JSON.stringify({ decision: 'approved' }),
      });
      expect(res.status).toBe(200);
      expect((await resumption).run.id).toBe(run.runId);
      await resumer.idle();
      const [row] = await store.db.query<{ claimed_by: string }>(`SELECT claimed_by FROM run_checkpoints`);
      expect(row!.claimed_by).toBe('b');
      expect((await runRow(run.runId)).status).toBe('completed');
    } finally {
      await resumer.stop();
    }
  });
});
