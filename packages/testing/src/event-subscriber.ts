/**
 * @module Test helper: a destination of a workspace that takes every workspace event, held as the pause rule holds
 * a failing destination (its deliveries are written, never attempted). The outbox writes an event only when some
 * destination takes it, so a test that reads the events a change wrote (`outbox_events`) gives its workspace one.
 */
import { WORKSPACE_EVENT_TYPES } from '../../server/src/domain/webhooks/envelope.ts';
import { randomBase62 } from '../../server/src/random.ts';
import type { Db } from '../../server/src/store/db.ts';

export async function subscribeToEveryEvent(db: Db, workspaceId: string, now = new Date('2026-01-01T00:00:00Z')): Promise<string> {
  const id = `dst_${randomBase62(24)}`;
  await db.query(
    `INSERT INTO webhook_destinations (id, workspace_id, url, events, secret_encrypted, status, paused_reason, created_at)
     VALUES ($1, $2, 'https://receiver.example/events', $3, 'unused', 'paused', 'failures', $4)`,
    [id, workspaceId, [...WORKSPACE_EVENT_TYPES], now],
  );
  return id;
}
