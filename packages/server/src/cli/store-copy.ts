/**
 * @module `service store copy --to <postgres URL>`: moves a deployment up from the embedded store (the
 * data directory) to PostgreSQL. The embedded store is opened behind its lock (refused while `serve`
 * runs), the target is checked empty before anything is written, migrated by this code to the same
 * schema version, and every table copied in one transaction (store/copy.ts); the row counts of each
 * table are compared and printed. Sealed secrets are copied as they are: the server on PostgreSQL opens
 * them with the same key, which the command says where to find (never the key itself).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../config.ts';
import { createSecretBox } from '../domain/webhooks/secret-box.ts';
import { SEALED_COLUMNS, unopenableSecret } from '../runtime/sealed-secrets.ts';
import { keyFilePath, readKeyFile } from '../runtime/secret-key.ts';
import { openCliStore } from '../runtime/store.ts';
import { CopyRefused, copyPlan, copyTables, migrationsOf, refusal, type TableCount, targetContents } from '../store/copy.ts';
import type { Db } from '../store/db.ts';
import { openStore } from '../store/open.ts';
import { messageOf } from '../caught.ts';
import type { CommandTable, Flags, Print } from './commands.ts';
import { UsageError } from './usage.ts';

const HELP = `Usage: service store copy --to <postgres URL> [--data-dir D] [--json]

Copies the embedded store (the data directory) into an empty PostgreSQL database, to run the service
on PostgreSQL from then on (DATABASE_URL). Stop the server first: the embedded store is locked while it
runs. The target is migrated to this version's schema, every table is copied in one transaction (in the
order of its foreign keys), its sequences set, and each table's row count compared and printed; on any
failure nothing stays written. A target that holds rows is refused.
  --to URL       the target database, postgres://user:password@host:port/database (it must exist)
  --data-dir D   the embedded store's directory (default ./data, or DATA_DIR)
  --json         print {"tables":[{"table","source","target"}],"secretKey"} at the end
Sealed secrets (webhook signing secrets, TOTP secrets, integration headers) are copied as they are: start
the server on PostgreSQL with SECRET_KEY set to the key that sealed them, SECRET_KEY if this command ran
with it, else the key file <data dir>/secret.key (the command prints which, never the key).`;

export const storeCommands: CommandTable = {
  groups: { store: HELP },
  commands: {
    'store copy': {
      options: { 'data-dir': { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      help: HELP,
      run: ({ values, positionals, print, env }) => copyStore(values, positionals, print, env),
    },
  },
};

async function copyStore(values: Flags, positionals: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${HELP}`);
  const to = typeof values.to === 'string' ? values.to : undefined;
  if (!to) throw new UsageError(`--to is required: the PostgreSQL database to copy into.\n\n${HELP}`);
  const target = describeTarget(to);
  // The source is the embedded store whatever DATABASE_URL says.
  const config = { ...loadConfig({ 'data-dir': typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined }, env), databaseUrl: undefined };
  if (!existsSync(join(config.dataDir, 'pglite'))) throw new UsageError(`No embedded store in ${config.dataDir} (give --data-dir or DATA_DIR).`);
  const say = values.json === true ? () => {} : print;

  const source = await openCliStore(config, 'store copy');
  try {
    const copyOut = source.db.copyOut?.bind(source.db);
    if (!copyOut) throw new Error('the embedded store cannot copy its tables out');
    const key = await sealingKey(source.db, config.secretKey, config.dataDir);
    const client = await connect(to, target);
    try {
      const sourceMigrations = await migrationsOf(source.db);
      const refused = refusal(await targetContents(client), sourceMigrations);
      if (refused) throw new UsageError(refused);
      say(`Migrating ${target} to this version's schema…`);
      await migrateTarget(to, target);
      const targetMigrations = (await targetContents(client)).migrations;
      if (targetMigrations.join() !== sourceMigrations.join())
        throw new UsageError(`The target's migrations differ from the embedded store's; nothing was copied.`);
      const plan = await copyPlan(source.db);
      say(`Copying ${plan.length} tables from ${config.dataDir} to ${target} in one transaction…`);
      const counts = await copyTables({ ...source.db, copyOut }, client, plan, say).catch((err: unknown) => {
        if (err instanceof CopyRefused) throw new UsageError(err.message);
        throw err;
      });
      if (values.json === true) print(JSON.stringify({ tables: counts, secretKey: key.where }));
      else print(summary(counts, target, key.note));
      return 0;
    } finally {
      await client.end();
    }
  } finally {
    await source.close();
  }
}

/** The target as the output names it: host, port and database, never the user's password. */
function describeTarget(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--to is not a URL: give postgres://user:password@host:port/database.\n\n${HELP}`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new UsageError(`--to must be a postgres:// URL.\n\n${HELP}`);
  return `postgres://${parsed.host}${parsed.pathname}`;
}

async function connect(url: string, target: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new UsageError(`Could not connect to ${target}: ${messageOf(err)}`);
  }
  return client;
}

async function migrateTarget(url: string, target: string): Promise<void> {
  const db = await openStore({ databaseUrl: url, poolSize: 1 }).catch((err: unknown) => {
    throw new UsageError(`Could not migrate ${target}: ${messageOf(err)}`);
  });
  await db.close();
}

/**
 * The key that sealed the store's secrets, as the embedded server finds it (SECRET_KEY, else the key file),
 * checked against one value of each sealed column: where it is, and the line the output ends with.
 */
async function sealingKey(db: Db, secretKey: string | undefined, dataDir: string): Promise<{ where: string | null; note: string }> {
  const key = secretKey ?? (await readKeyFile(dataDir));
  const where = secretKey ? 'SECRET_KEY' : key === undefined ? null : keyFilePath(dataDir);
  if (key === undefined) {
    for (const [table, , column] of SEALED_COLUMNS) {
      const [row] = await db.query(`SELECT 1 FROM ${table} WHERE ${column} ~ '^v[0-9]+[.]' LIMIT 1`);
      if (row) throw new UsageError(`${table}.${column} holds sealed secrets but there is no key: set SECRET_KEY to the key that sealed them.`);
    }
    return { where, note: 'The store holds no sealed secret: start the server on PostgreSQL with a new SECRET_KEY of at least 32 characters.' };
  }
  const wrong = await unopenableSecret(db, createSecretBox(key));
  if (wrong) throw new UsageError(`A sealed secret in ${wrong} does not open under ${where}: set SECRET_KEY to the key that sealed it; nothing was copied.`);
  return {
    where,
    note:
      where === 'SECRET_KEY'
        ? 'Sealed secrets were copied as they are: start the server on PostgreSQL with the same SECRET_KEY this command ran with.'
        : `Sealed secrets were copied as they are: start the server on PostgreSQL with SECRET_KEY set to the key in ${where} (the same key; keep the file's content secret).`,
  };
}

function summary(counts: readonly TableCount[], target: string, keyNote: string): string {
  const width = Math.max(...counts.map((c) => c.table.length), 'table'.length);
  const rows = counts.map((c) => `  ${c.table.padEnd(width)}  ${String(c.source).padStart(9)}  ${String(c.target).padStart(9)}`);
  const total = counts.reduce((sum, c) => sum + c.target, 0);
  return [
    `Copied ${total} rows in ${counts.length} tables to ${target}; every table's rows match:`,
    `  ${'table'.padEnd(width)}  ${'source'.padStart(9)}  ${'target'.padStart(9)}`,
    ...rows,
    keyNote,
    `Then run the server with DATABASE_URL set to the target (and REDIS_URL for several instances); keep the data directory until it serves.`,
  ].join('\n');
}
