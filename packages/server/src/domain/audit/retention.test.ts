/**
 * Retention of the audit log (AUDIT_RETENTION_DAYS): the sweep deletes the events older than the retention, keeps the
 * newer ones, and runs at most once a minute however often the worker ticks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { auditRetentionSweeper, recordAudit } from './index.ts';

const DAY_MS = 86_400_000;

describe.each(testBackends())('the audit retention on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  const record = (id: string, at: Date) =>
    store.db.transaction((tx) =>
      recordAudit(
        tx,
        { actor: { type: 'operator', id: 'op_test' }, address: null, requestId: null },
        t.workspaceId,
        { action: 'workspace.updated', target: { type: 'workspace', id } },
        at,
      ),
    );
  const targets = async () =>
    (await store.db.query<{ target_id: string }>(`SELECT target_id FROM audit_events WHERE workspace_id = $1 ORDER BY created_at`, [t.workspaceId])).map(
      (row) => row.target_id,
    );

  it('deletes what is older than the retention, once a minute at most', async () => {
    const clock = fixedClock('2027-06-01T00:00:00Z');
    await store.db.exec(`DELETE FROM audit_events`);
    await record('old', new Date(clock.now().getTime() - 31 * DAY_MS));
    await record('recent', new Date(clock.now().getTime() - 29 * DAY_MS));
    const sweep = auditRetentionSweeper({ db: store.db, clock, retentionDays: 30 });
    expect(await sweep()).toBe(1);
    expect(await targets()).toEqual(['recent']);
    // Two days later, but within the minute: nothing runs.
    await record('older', new Date(clock.now().getTime() - 40 * DAY_MS));
    expect(await sweep()).toBe(0);
    expect(await targets()).toEqual(['older', 'recent']);
    clock.advance(2 * DAY_MS);
    expect(await sweep()).toBe(2);
    expect(await targets()).toEqual([]);
  });

  it('refuses details shaped like a secret, and the change with them', async () => {
    const context = { actor: { type: 'operator' as const, id: 'op_test' }, address: null, requestId: null };
    const leak = (details: Record<string, unknown>) =>
      store.db.transaction((tx) =>
        recordAudit(tx, context, t.workspaceId, { action: 'workspace.updated', target: { type: 'workspace', id: 'leak' }, details }, new Date()),
      );
    await expect(leak({ note: t.apiKey })).rejects.toThrow(/shaped like a secret/);
    await expect(leak({ nested: [{ value: 'whsec_Zx8Kq2Lm7Vb4Nt9Pc3Rw5Hd1Fg6Jk0Qs' }] })).rejects.toThrow(/shaped like a secret/);
    await expect(leak({ password: 'short' })).rejects.toThrow(/named like a secret/);
    expect(await store.db.query(`SELECT 1 FROM audit_events WHERE target_id = 'leak'`)).toEqual([]);
  });
});
