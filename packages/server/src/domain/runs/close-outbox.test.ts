/**
 * A close enqueues its events (store/functions/outbox_enqueue.sql) only when a destination of its workspace takes one
 * of them: a workspace without one (most proxied calls) does not pay for the statement, which would write nothing.
 * Counted as the calls of outbox_enqueue inside the closing statement (the backend's own function statistics, in one
 * transaction with the statement), on both stores. Such a close does not even send its events (close-detail.ts); one
 * that left them out when a destination took them is asked for them, and sent again whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { OpenDb, Tx } from '../../store/db.ts';
import { createCloseDetail } from './close-detail.ts';

describe.each(testBackends())('a close and the outbox on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  /** Calls of outbox_enqueue made by the last closing statement. */
  let calls: number | undefined;
  /** The closing statements sent: whether each carried its events, and the error it answered. */
  let sent: { events: boolean; error?: string }[] = [];

  beforeAll(async () => {
    store = await open();
    const inner = store.db;
    const db: OpenDb = {
      ...inner,
      async query(sql, params, options) {
        if (!/FROM finish_run\(/.test(sql)) return inner.query(sql, params, options);
        const statement: (typeof sent)[number] = { events: (JSON.parse(params![0] as string) as { events: unknown }).events !== null };
        sent.push(statement);
        return inner
          .transaction(async (tx) => {
            await tx.query(`SET LOCAL track_functions = 'pl'`);
            const before = await outboxCalls(tx);
            const rows = await tx.query(sql, params, options);
            calls = (await outboxCalls(tx)) - before;
            return rows as never[];
          })
          .catch((err: Error) => {
            statement.error = err.message;
            throw err;
          });
      },
    };
    t = await createTestApp({ db });
    await t.services.keys.ready();
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  async function outboxCalls(tx: Tx): Promise<number> {
    const [row] = await tx.query<{ calls: number }>(`SELECT COALESCE(pg_stat_get_xact_function_calls('outbox_enqueue'::regproc), 0)::int AS calls`);
    return row!.calls;
  }

  async function invoke(): Promise<string> {
    calls = undefined;
    sent = [];
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { runId: string }).runId;
  }

  async function outboxEvents(runId: string): Promise<string[]> {
    const rows = await store.db.query<{ type: string }>(`SELECT type FROM outbox_events WHERE data->>'run_id' = $1`, [runId]);
    return rows.map((row) => row.type);
  }

  /** An active destination of the workspace, subscribed to one event type. */
  async function addDestination(id: string, event: string): Promise<void> {
    await store.db.query(
      `INSERT INTO webhook_destinations (id, workspace_id, url, events, secret_encrypted, status, created_at)
       VALUES ($1, $2, 'https://r.example/h', ARRAY[$3], 'x', 'active', now())`,
      [id, t.workspaceId, event],
    );
  }

  it('skips the outbox when no destination of the workspace takes the run’s events', async () => {
    await addDestination('dst_close_other', 'integration.connected');
    const runId = await invoke();
    expect(calls).toBe(0);
    expect(await outboxEvents(runId)).toEqual([]);
    // Its events were not sent either.
    expect(sent).toEqual([{ events: false }]);
  });

  it('enqueues run.completed when a destination of the workspace takes it', async () => {
    // Added after the workspace's first close: the next one leaves its events out, is asked for them, and goes whole.
    await addDestination('dst_close_runs', 'run.completed');
    const runId = await invoke();
    expect(sent).toEqual([{ events: false, error: expect.stringContaining('close_needs_events') }, { events: true }]);
    expect(calls).toBe(1);
    expect(await outboxEvents(runId)).toEqual(['run.completed']);
    // The workspace's closes go whole from then on.
    const next = await invoke();
    expect(sent).toEqual([{ events: true }]);
    expect(await outboxEvents(next)).toEqual(['run.completed']);
  });

  it('reads on a workspace’s first close whether its destinations take a close’s events, and learns when asked', async () => {
    const detail = createCloseDetail(store.db);
    // This workspace's destinations take run.completed (the test before); the other has none.
    expect(await detail.takesEvents(t.workspaceId)).toBe(true);
    expect(await detail.takesEvents('wksp_without_destinations')).toBe(false);
    detail.learn('wksp_without_destinations');
    expect(await detail.takesEvents('wksp_without_destinations')).toBe(true);
  });
});
