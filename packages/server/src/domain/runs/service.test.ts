/**
 * The run service used from code (inbound webhooks): adopting an `in_progress` row written by
 * ingestion, once only; a refused run failing with the refusal's code; createRun in the background.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { pauseAgent } from '../agents/settings.ts';
import { inboundRunExecutor } from './inbound.ts';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
  await subscribeToEveryEvent(t.db, t.workspaceId);
});
afterEach(async () => {
  await t.close();
});

/** The row inbound ingestion writes before the run service takes over. */
async function ingestedRun(runId: string, agentSlug: string): Promise<void> {
  const now = t.clock.now();
  await t.db.query(
    `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
     VALUES ($1, $2, 'in_progress', $3, $3, 'Sonata', 'inbound_webhook', $4, $4, $4, $4)`,
    [runId, t.workspaceId, agentSlug, now],
  );
}

describe('runs started from code', () => {
  it('adopts an ingested run once and completes it, with its events', async () => {
    await ingestedRun('run_inboundAAAAAAAAAAAA', 'sales');
    const errors: unknown[] = [];
    const execute = inboundRunExecutor(t.services.runs, (e) => errors.push(e));
    const input = {
      runId: 'run_inboundAAAAAAAAAAAA',
      workspaceId: t.workspaceId,
      agentSlug: 'sales',
      alias: 'Sonata',
      content: 'New lead: Dana Whitfield, Northwind',
    };
    await execute(input);
    await execute(input); // a second hand-over after a crash must not run it twice
    const run = await t.services.runs.waitForTerminal(t.workspaceId, 'run_inboundAAAAAAAAAAAA', 10_000);
    expect(run).toMatchObject({ status: 'completed', source: 'inbound_webhook', agentSlug: 'sales' });
    expect(run.usage.stu).toBeGreaterThan(0);
    // Let the second (refused) adoption settle, then check nothing ran twice.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toEqual([]);
    const ledger = await t.db.query(`SELECT 1 FROM usage_ledger WHERE run_id = 'run_inboundAAAAAAAAAAAA'`);
    expect(ledger).toHaveLength(1);
    const events = await t.db.query<{ type: string }>(`SELECT type FROM outbox_events`);
    expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
  });

  it('fails an ingested run whose agent is paused, with reason agent_disabled and run.failed', async () => {
    await pauseAgent(t.db, t.clock, t.workspaceId, 'finance', 'Audit');
    await ingestedRun('run_inboundBBBBBBBBBBBB', 'finance');
    const { runId } = await t.services.runs.createRun({
      workspaceId: t.workspaceId,
      agentSlug: 'finance',
      alias: 'Sonata',
      messages: [{ role: 'user', content: 'Invoice 42 paid' }],
      source: 'inbound_webhook',
      existingRunId: 'run_inboundBBBBBBBBBBBB',
    });
    expect(runId).toBe('run_inboundBBBBBBBBBBBB');
    const detail = await t.services.runs.getRun(t.workspaceId, runId);
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'agent_disabled' });
    const [event] = await t.db.query<{ type: string; data: Record<string, unknown> }>(`SELECT type, data FROM outbox_events`);
    expect(event).toMatchObject({ type: 'run.failed', data: { run_id: runId, reason: 'agent_disabled', agent: 'finance' } });
  });

  it('createRun without a row creates one and runs it in the background; refusals reject', async () => {
    const { runId } = await t.services.runs.createRun({
      workspaceId: t.workspaceId,
      alias: 'Prelude',
      messages: [{ role: 'user', content: 'Our laptop will not connect to the wifi' }],
      source: 'inbound_webhook',
    });
    const run = await t.services.runs.waitForTerminal(t.workspaceId, runId, 10_000);
    expect(run).toMatchObject({ status: 'completed', agentSlug: 'orchestrator', source: 'inbound_webhook' });
    expect(await t.services.runs.answeredBy(t.workspaceId, runId)).toBe('it');
    await expect(
      t.services.runs.createRun({
        workspaceId: t.workspaceId,
        agentSlug: 'nobody',
        alias: 'Prelude',
        messages: [{ role: 'user', content: 'x' }],
        source: 'inbound_webhook',
      }),
    ).rejects.toMatchObject({ code: 'agent_unknown', status: 403 });
  });
});
