/**
 * The embedded store in a worker thread (store/pglite-worker.ts), beside what every store does
 * (index.test.ts runs on it too): a PostgreSQL error keeps its fields across the thread, a
 * transaction holds the other statements behind it until it ends, notifications come back, the
 * main thread runs while a statement runs, and a closed store fails as unavailable.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore, openPgliteWorkerTestStore, untilFileSql } from '@service/testing/store';
import type { OpenDb } from './db.ts';
import { isStoreUnavailable } from './unavailable.ts';

describe('the embedded store in a worker thread', () => {
  let store: Awaited<ReturnType<typeof openPgliteWorkerTestStore>>;
  let db: OpenDb;
  let inProcess: OpenDb;
  const now = new Date('2026-06-01T09:00:00Z');

  beforeAll(async () => {
    store = await openPgliteWorkerTestStore();
    db = store.db;
    inProcess = await openMemoryStore();
  });
  afterAll(async () => {
    await store?.cleanup();
    await inProcess?.close();
  });

  it('keeps the PostgreSQL fields of an error, as the in-process store gives them', async () => {
    const insert = `INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_dup', 'D', $1)`;
    const failure = async (on: OpenDb) => {
      await on.query(insert, [now]);
      return on.query(insert, [now]).then(
        () => undefined,
        (err: unknown) => err as Error & Record<string, unknown>,
      );
    };
    const [thread, main] = [await failure(db), await failure(inProcess)];
    expect(thread).toBeInstanceOf(Error);
    expect(thread).toMatchObject({ code: '23505', constraint: 'workspaces_pkey', table: 'workspaces', severity: 'ERROR' });
    for (const field of ['message', 'code', 'constraint', 'table', 'detail', 'severity', 'routine']) expect(thread![field], field).toEqual(main![field]);
    // The statement's parameters stay in the worker.
    expect(thread).not.toHaveProperty('params');
  });

  it('holds every other statement behind an open transaction until it ends', async () => {
    const events: string[] = [];
    let outside: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_tx1', 'T', $1)`, [now]);
      outside = db
        .query<{ n: number }>(`SELECT count(*)::int AS n FROM workspaces WHERE id LIKE 'wksp_tx%'`)
        .then(([row]) => events.push(`outside saw ${row!.n}`));
      // Another transaction too: it waits for this one, then runs.
      void db.transaction(async (other) => {
        await other.query(`SELECT 1`);
        events.push('second transaction');
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_tx2', 'T', $1)`, [now]);
      events.push('first transaction ends');
    });
    await outside;
    await db.query('SELECT 1');
    expect(events).toEqual(['first transaction ends', 'outside saw 2', 'second transaction']);
  });

  it('rolls back a transaction whose callback throws after its statements, and commits none of them', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_gone', 'G', $1)`, [now]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.query(`SELECT id FROM workspaces WHERE id = 'wksp_gone'`)).toEqual([]);
    // A transaction that ran no statement costs nothing and returns its value.
    expect(await db.transaction(async () => 42)).toBe(42);
  });

  it('forwards LISTEN notifications of committed transactions, never of rolled back ones', async () => {
    const heard: string[] = [];
    const states: boolean[] = [];
    await db.listen!('test_news', { message: (payload) => heard.push(payload), state: (up) => states.push(up) });
    expect(states).toEqual([true]);
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_notify('test_news.' || current_schema(), $1)`, ['committed']);
    });
    await db
      .transaction(async (tx) => {
        await tx.query(`SELECT pg_notify('test_news.' || current_schema(), $1)`, ['rolled back']);
        throw new Error('undo');
      })
      .catch(() => {});
    // A statement after both: its answer comes after any notification posted before it.
    await db.query('SELECT 1');
    expect(heard).toEqual(['committed']);
  });

  it('leaves the main thread free while a statement runs, and counts it as queued', async () => {
    const events: string[] = [];
    const running = db.query(untilFileSql('release-1')).then(() => events.push('statement done'));
    expect(db.queued!()).toBe(1);
    const waiting = db.query('SELECT 1').then(() => events.push('queued statement done'));
    expect(db.queued!()).toBe(2);
    // Timers fire on this thread while the worker runs the statement.
    await new Promise((resolve) => setTimeout(resolve, 50));
    events.push('timer fired');
    writeFileSync(join(store.dataDir, 'release-1'), '');
    await Promise.all([running, waiting]);
    expect(events).toEqual(['timer fired', 'statement done', 'queued statement done']);
    expect(db.queued!()).toBe(0);
  });
});

describe('a closed worker store', () => {
  it('fails later statements as the store being unavailable, and closes twice without harm', async () => {
    const store = await openPgliteWorkerTestStore();
    await store.db.query('SELECT 1');
    await store.cleanup();
    const err = await store.db.query('SELECT 1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(isStoreUnavailable(err)).toBe(true);
    await store.db.close();
  });

  it('closes while a transaction is open between two statements: the transaction is rolled back, not waited for', async () => {
    const store = await openPgliteWorkerTestStore();
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => (inside = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A run's close in flight when the server stops: its first statement is done, its next waits on something else.
    const transaction = store.db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_open', 'O', now())`);
        inside();
        await held;
        await tx.query('SELECT 1');
      })
      .catch((e: unknown) => e);
    await begun;
    const closing = store.cleanup();
    release();
    await closing;
    expect(isStoreUnavailable(await transaction)).toBe(true);
  });
});
