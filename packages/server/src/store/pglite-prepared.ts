/**
 * @module Named prepared statements on PGlite. PGlite's `query` parses, describes and plans its statement every time
 * (six calls into its WebAssembly backend). A statement given a name (`QueryOptions.name`: the money path's, which run
 * the most) is parsed once per instance here, as node-postgres does per connection; each call is then one exchange:
 * bind, describe, execute, sync. Outside transactions only: a transaction's statements run on its handle, as before.
 *
 * The parameters take the types the backend describes for the statement and PGlite's own serializers, and the rows
 * PGlite's own parsers, so the values are those `query` would give; an error is the backend's (its SQLSTATE `code`
 * included). Each call holds PGlite's locks as `query` does: after any transaction in progress, and alone.
 *
 * Loaded by the embedded store's worker thread too (store/pglite-thread.ts): erasable TypeScript, and nothing of the
 * server's imported.
 */
import { type PGlite, parse, protocol } from '@electric-sql/pglite';

/** Runs the statement `name` (prepared on its first call with `sql`) with `params`; resolves to its rows. */
export type PreparedQuery = (name: string, sql: string, params: readonly unknown[]) => Promise<unknown[]>;

/** The prepared statements of one PGlite instance (names are the instance's: one map per instance). */
export function preparedStatements(pg: PGlite): PreparedQuery {
  /** Per name: its text, and its parameters' type ids as the backend described them. */
  const statements = new Map<string, { sql: string; types: readonly number[] }>();
  const { serialize } = protocol;

  async function prepare(name: string, sql: string): Promise<readonly number[]> {
    const known = statements.get(name);
    if (known) {
      if (known.sql !== sql) throw new Error(`the prepared statement ${name} was given two texts`);
      return known.types;
    }
    const { messages } = await pg.execProtocol(concat(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()));
    const types = parse.parseDescribeStatementResults(messages);
    statements.set(name, { sql, types });
    return types;
  }

  return (name, sql, params) =>
    pg._runExclusiveTransaction(() =>
      pg.runExclusive(async () => {
        // As `query` answers once closed (store/unavailable.ts reads it as the store gone).
        if (pg.closed) throw new Error('PGlite is closed');
        const types = await prepare(name, sql);
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serializer = pg.serializers[types[i]!];
          return serializer ? serializer(value) : String(value);
        });
        const { messages } = await pg.execProtocol(
          concat(serialize.bind({ statement: name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()),
        );
        return parse.parseResults(messages, pg.parsers)[0]?.rows ?? [];
      }),
    );
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
