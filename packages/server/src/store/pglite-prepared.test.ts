/**
 * Named prepared statements on PGlite (pglite-prepared.ts): the rows and errors are those PGlite's `query` gives, the
 * statement is parsed once, and a call never runs inside a transaction that is open meanwhile.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PreparedQuery, preparedStatements } from './pglite-prepared.ts';

describe('prepared statements on PGlite', () => {
  let pg: PGlite;
  let prepared: PreparedQuery;

  beforeAll(async () => {
    pg = await PGlite.create();
    prepared = preparedStatements(pg);
    await pg.exec(`CREATE TABLE things (id text PRIMARY KEY, n integer NOT NULL, at timestamptz, doc jsonb, tags text[], ratio float8, ok boolean)`);
  });
  afterAll(async () => {
    await pg.close();
  });

  const insert = `INSERT INTO things (id, n, at, doc, tags, ratio, ok) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`;

  it('gives the rows and values query gives, parameters typed as the statement says', async () => {
    const at = new Date('2026-06-01T09:00:00.123Z');
    const rows = await prepared('insert_thing', insert, ['a', 7, at, JSON.stringify({ k: [1, 'x'] }), ['p', 'q'], 0.25, true]);
    expect(rows).toEqual([{ id: 'a', n: 7, at, doc: { k: [1, 'x'] }, tags: ['p', 'q'], ratio: 0.25, ok: true }]);
    expect(await prepared('insert_thing', insert, ['b', 8, null, null, null, null, null])).toEqual([
      { id: 'b', n: 8, at: null, doc: null, tags: null, ratio: null, ok: null },
    ]);
    const select = `SELECT * FROM things WHERE id = ANY ($1) ORDER BY id`;
    const viaQuery = (await pg.query(select, [['a', 'b']])).rows;
    expect(await prepared('select_things', select, [['a', 'b']])).toEqual(viaQuery);
    expect(await prepared('select_things', select, [['nothing']])).toEqual([]);
  });

  it('is parsed once: a second call runs the statement the first prepared', async () => {
    await prepared('count_things', `SELECT count(*)::int AS n FROM things`, []);
    const [statement] = (await pg.query<{ name: string; statement: string }>(`SELECT name, statement FROM pg_prepared_statements WHERE name = 'count_things'`))
      .rows;
    expect(statement?.statement).toBe('SELECT count(*)::int AS n FROM things');
    await expect(prepared('count_things', `SELECT 1`, [])).rejects.toThrow('the prepared statement count_things was given two texts');
  });

  it("fails with the backend's error and code, and the next call runs", async () => {
    const err = await prepared('insert_thing', insert, ['a', 1, null, null, null, null, null]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505', constraint: 'things_pkey', severity: 'ERROR' });
    await expect(prepared('raise', `SELECT CASE WHEN $1::int > 0 THEN 1 ELSE 1 / $1::int END AS x`, [0])).rejects.toMatchObject({ code: '22012' });
    expect(await prepared('raise', `SELECT CASE WHEN $1::int > 0 THEN 1 ELSE 1 / $1::int END AS x`, [2])).toEqual([{ x: 1 }]);
    // A statement that does not parse is not kept: the name can be prepared again.
    await expect(prepared('broken', `SELEC 1`, [])).rejects.toMatchObject({ code: '42601' });
    await expect(prepared('broken', `SELECT 1 AS one`, [])).resolves.toEqual([{ one: 1 }]);
  });

  it('waits for a transaction in progress and runs outside it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const begun = new Promise<void>((resolve) => (began = resolve));
    const rolledBack = pg
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO things (id, n) VALUES ('in-tx', 1)`);
        began();
        await held;
        await tx.rollback();
      })
      .catch(() => {});
    await begun;
    const outside = prepared('insert_thing', insert, ['outside', 2, null, null, null, null, null]);
    release();
    await rolledBack;
    await outside;
    const ids = (await pg.query<{ id: string }>(`SELECT id FROM things WHERE id IN ('in-tx', 'outside') ORDER BY id`)).rows.map((r) => r.id);
    expect(ids).toEqual(['outside']);
  });

  it('answers as query does once PGlite is closed', async () => {
    const other = await PGlite.create();
    const own = preparedStatements(other);
    await other.close();
    await expect(own('one', 'SELECT 1', [])).rejects.toThrow('PGlite is closed');
  });
});
