import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { enqueueEvent, enqueuePrepared, enqueueTestEvent, prepareEvent } from './outbox.ts';

const NOW = new Date('2026-11-22T08:00:00Z');
const W1 = 'wksp_outboxAAAAAAAAAAAAAAA';
const W2 = 'wksp_outboxBBBBBBBBBBBBBBB';

describe.each(testBackends())('outbox on $name', ({ open }) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await open();
    const db = store.db;
    for (const w of [W1, W2]) await db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, 'W', $2)`, [w, NOW]);
    const dst = `INSERT INTO webhook_destinations (id, workspace_id, url, events, secret_encrypted, status, created_at)
                 VALUES ($1, $2, 'https://r.example/h', $3, 'x', $4, $5)`;
    await db.query(dst, ['dst_run', W1, ['run.completed', 'run.failed'], 'active', NOW]);
    await db.query(dst, ['dst_appr', W1, ['approval.created'], 'active', NOW]);
    await db.query(dst, ['dst_paused', W1, ['run.completed'], 'paused', NOW]);
    await db.query(dst, ['dst_failing', W1, ['run.failed'], 'paused', NOW]);
    await db.query(`UPDATE webhook_destinations SET paused_reason = 'admin' WHERE id = 'dst_paused'`);
    await db.query(`UPDATE webhook_destinations SET paused_reason = 'failures' WHERE id = 'dst_failing'`);
    await db.query(dst, ['dst_other', W2, ['run.completed'], 'active', NOW]);
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  it('writes the event and one due delivery per active subscribed destination of the workspace', async () => {
    const out = await enqueueEvent(
      store.db,
      {
        tenantId: W1,
        type: 'run.completed',
        data: { run_id: 'run_x', agent: 'sales', alias: 'Prelude', status: 'completed', usage: { input_tokens: 1, output_tokens: 2, stu: 3 } },
      },
      { now: NOW },
    );
    expect(out.eventId).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    expect(out.deliveries).toBe(1);
    const rows = await store.db.query<{ destination_id: string; status: string; attempts: number; next_attempt_at: Date }>(
      `SELECT destination_id, status, attempts, next_attempt_at FROM deliveries WHERE event_id = $1`,
      [out.eventId],
    );
    expect(rows).toEqual([{ destination_id: 'dst_run', status: 'pending', attempts: 0, next_attempt_at: NOW }]);
    const [event] = await store.db.query<{ body: string; type: string }>(`SELECT body, type FROM outbox_events WHERE id = $1`, [out.eventId]);
    expect(JSON.parse(event!.body)).toMatchObject({ id: out.eventId, type: 'run.completed', tenant_id: W1, created_at: NOW.toISOString() });
  });

  it('joins the caller transaction: a rollback leaves neither event nor delivery', async () => {
    let eventId = '';
    await expect(
      store.db.transaction(async (tx) => {
        eventId = (
          await enqueueEvent(
            tx,
            { tenantId: W1, type: 'run.failed', data: { run_id: 'run_y', agent: 'sales', reason: 'timeout', status: 'failed' } },
            { now: NOW },
          )
        ).eventId;
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect(eventId).not.toBe('');
    expect(await store.db.query(`SELECT 1 FROM outbox_events WHERE id = $1`, [eventId])).toEqual([]);
    expect(await store.db.query(`SELECT 1 FROM deliveries WHERE event_id = $1`, [eventId])).toEqual([]);
  });

  it('holds deliveries for a destination paused by the failure rule, none for one an admin paused', async () => {
    const failed = await enqueueEvent(
      store.db,
      { tenantId: W1, type: 'run.failed', data: { run_id: 'run_z', agent: 'it', reason: 'timeout', status: 'failed' } },
      { now: NOW },
    );
    const rows = await store.db.query<{ destination_id: string }>(`SELECT destination_id FROM deliveries WHERE event_id = $1 ORDER BY destination_id`, [
      failed.eventId,
    ]);
    expect(rows.map((r) => r.destination_id)).toEqual(['dst_failing', 'dst_run']);
  });

  it('redacts agent text before it is stored', async () => {
    const out = await enqueueEvent(
      store.db,
      {
        tenantId: W1,
        type: 'approval.created',
        data: {
          approval_id: 'apr_1',
          run_id: 'run_1',
          agent: 'finance',
          action: 'payment.initiate',
          summary: 'Answer from gpt-4o at http://10.0.0.5/x',
          expires_at: NOW.toISOString(),
        },
      },
      { now: NOW },
    );
    const [event] = await store.db.query<{ body: string }>(`SELECT body FROM outbox_events WHERE id = $1`, [out.eventId]);
    expect(event!.body).not.toContain('gpt-4o');
    expect(event!.body).not.toContain('10.0.0.5');
    expect(out.deliveries).toBe(1);
  });

  it('writes nothing for an event no destination takes: neither the event nor a delivery', async () => {
    // No destination of W1 takes draft.created; W2's only one takes run.completed, not run.failed.
    const draft = await enqueueEvent(
      store.db,
      { tenantId: W1, type: 'draft.created', data: { draft_id: 'drf_1', run_id: 'run_d', agent: 'sales', kind: 'email', subject: 'Hello' } },
      { now: NOW },
    );
    const failed = await enqueueEvent(
      store.db,
      { tenantId: W2, type: 'run.failed', data: { run_id: 'run_f', agent: 'sales', reason: 'timeout', status: 'failed' } },
      { now: NOW },
    );
    for (const out of [draft, failed]) {
      expect(out.deliveries).toBe(0);
      expect(await store.db.query(`SELECT 1 FROM outbox_events WHERE id = $1`, [out.eventId])).toEqual([]);
    }
  });

  it('writes a run’s prepared events in one statement, only those some destination takes, with their deliveries', async () => {
    const taken = prepareEvent(
      {
        tenantId: W2,
        type: 'run.completed',
        data: { run_id: 'run_p', agent: 'sales', alias: 'Prelude', status: 'completed', usage: { input_tokens: 1, output_tokens: 1, stu: 1 } },
      },
      { now: NOW },
    );
    const untaken = prepareEvent(
      { tenantId: W2, type: 'run.failed', data: { run_id: 'run_p', agent: 'sales', reason: 'timeout', status: 'failed' } },
      { now: NOW },
    );
    await enqueuePrepared(store.db, W2, taken, NOW);
    await enqueuePrepared(store.db, W2, untaken, NOW);
    const written = await store.db.query<{ id: string; destination_id: string }>(
      `SELECT e.id, d.destination_id FROM outbox_events e JOIN deliveries d ON d.event_id = e.id WHERE e.id = ANY ($1::text[])`,
      [[taken.id, untaken.id]],
    );
    expect(written).toEqual([{ id: taken.id, destination_id: 'dst_other' }]);
    expect(await store.db.query(`SELECT 1 FROM outbox_events WHERE id = $1`, [untaken.id])).toEqual([]);
  });

  it('a ping goes to its one destination', async () => {
    const out = await enqueueTestEvent(store.db, { tenantId: W1, destinationId: 'dst_appr', type: 'ping' }, { now: NOW });
    const rows = await store.db.query<{ destination_id: string }>(`SELECT destination_id FROM deliveries WHERE event_id = $1`, [out.eventId]);
    expect(rows).toEqual([{ destination_id: 'dst_appr' }]);
  });
});
