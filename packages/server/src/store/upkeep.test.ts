/**
 * The embedded store's upkeep (store/upkeep.ts): PGlite runs no autovacuum, so without these passes its tables never
 * get statistics and never give back dead row versions. Each pass handles the table furthest past autovacuum's
 * default thresholds; passes until none is due leave every table analyzed and the updated one vacuumed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { embeddedStoreUpkeep, UPKEEP_EVERY_MS, upkeepPass, type UpkeepDone } from './upkeep.ts';

const [pglite, postgres] = [testBackends().find((b) => b.name === 'pglite')!, testBackends().find((b) => b.name === 'postgres')];

describe('the embedded store upkeep', () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await pglite.open();
    await store.db.exec(`CREATE TABLE upkeep_probe (id integer PRIMARY KEY, v text)`);
  });
  afterEach(async () => {
    await store?.cleanup();
  });

  /** Passes until none is due: what each did. */
  async function passesUntilDone(): Promise<NonNullable<UpkeepDone>[]> {
    const done: NonNullable<UpkeepDone>[] = [];
    for (let pass = await upkeepPass(store.db); pass; pass = await upkeepPass(store.db)) {
      done.push(pass);
      expect(done.length).toBeLessThan(100);
    }
    return done;
  }

  async function probeStats(): Promise<{ reltuples: number; dead: number; analyzed: boolean }> {
    await store.db.query('SELECT pg_stat_force_next_flush()');
    const [row] = await store.db.query<{ reltuples: number; dead: number; analyzed: boolean }>(
      `SELECT c.reltuples::float8 AS reltuples, s.n_dead_tup::int AS dead, s.last_analyze IS NOT NULL AS analyzed
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.schemaname = current_schema() AND s.relname = 'upkeep_probe'`,
    );
    return row!;
  }

  it('analyzes a table that grew, vacuums one whose rows were updated, and then finds nothing due', async () => {
    await store.db.query(`INSERT INTO upkeep_probe SELECT n, 'x' FROM generate_series(1, 2000) AS n`);
    expect(await probeStats()).toEqual({ reltuples: -1, dead: 0, analyzed: false });
    // 2,000 inserts: past both the analysis (50) and the insert vacuum (1,000) thresholds of a table never analyzed.
    expect(await passesUntilDone()).toContainEqual({ table: 'upkeep_probe', vacuumed: true });
    expect(await probeStats()).toEqual({ reltuples: 2000, dead: 0, analyzed: true });
    expect(await upkeepPass(store.db)).toBeUndefined();

    // 300 updated: 300 dead rows, below 50 + 20 % of 2,000 (450): an analysis only (past 50 + 10 %, 250).
    await store.db.query(`UPDATE upkeep_probe SET v = 'y' WHERE id <= 300`);
    expect(await passesUntilDone()).toEqual([{ table: 'upkeep_probe', vacuumed: false }]);
    expect((await probeStats()).dead).toBe(300);
    // 300 more: 600 dead rows, past 450: vacuumed.
    await store.db.query(`UPDATE upkeep_probe SET v = 'y' WHERE id > 300 AND id <= 600`);
    expect(await passesUntilDone()).toEqual([{ table: 'upkeep_probe', vacuumed: true }]);
    expect((await probeStats()).dead).toBe(0);
  });

  it('passes at most once a minute from the worker', async () => {
    const clock = fixedClock();
    const upkeep = embeddedStoreUpkeep({ db: store.db, clock });
    await store.db.query(`INSERT INTO upkeep_probe SELECT n, 'x' FROM generate_series(1, 2000) AS n`);
    expect(await upkeep()).toBe(1);
    // Due again, but within the minute.
    await store.db.query(`INSERT INTO upkeep_probe SELECT n, 'x' FROM generate_series(2001, 6000) AS n`);
    expect(await upkeep()).toBe(0);
    clock.advance(UPKEEP_EVERY_MS);
    expect(await upkeep()).toBe(1);
    expect(await probeStats()).toMatchObject({ reltuples: 6000 });
  });
});

describe.skipIf(!postgres)('the upkeep on PostgreSQL', () => {
  it('does nothing: autovacuum does it', async () => {
    const store = await postgres!.open();
    try {
      await store.db.exec(`CREATE TABLE upkeep_probe (id integer PRIMARY KEY, v text)`);
      // The inserting connection's counts flushed as its transaction ends, so every connection of the pool sees them.
      await store.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO upkeep_probe SELECT n, 'x' FROM generate_series(1, 2000) AS n`);
        await tx.query('SELECT pg_stat_force_next_flush()');
      });
      expect(await embeddedStoreUpkeep({ db: store.db, clock: fixedClock() })()).toBe(0);
      const [analyzed] = await store.db.query<{ at: Date | null }>(
        `SELECT last_analyze AS at FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'upkeep_probe'`,
      );
      expect(analyzed).toEqual({ at: null });
      // The table was due: a pass on its own takes it.
      expect(await upkeepPass(store.db)).toEqual({ table: 'upkeep_probe', vacuumed: true });
    } finally {
      await store.cleanup();
    }
  });
});
