/**
 * @module `service secret-key rotate`: re-seals every secret kept at rest (webhook destination and
 * inbound webhook signing secrets, TOTP secrets) from the old key to the new one, in one transaction.
 *
 * The old key is `OLD_SECRET_KEY`, or the key file `<data dir>/secret.key` when that is unset; the new
 * key is `SECRET_KEY`. Keys are read from the environment, never from the command line (where `ps`
 * shows them). A value already sealed under the new key is left as it is, so the command can run again
 * after an interruption; a value that opens under neither key stops it, nothing changed. Stop every
 * instance first: one still running would seal new secrets under the old key.
 *
 * With the embedded store, the key file (the key `serve` uses without SECRET_KEY) then holds the new key,
 * replaced atomically once the store is closed; a run interrupted between the two finds every value
 * already under the new key and replaces the file.
 */
import { loadConfig } from '../config.ts';
import { createSecretBox, type SecretBox } from '../domain/webhooks/secret-box.ts';
import type { Db } from '../store/db.ts';
import { row, selectRows, text } from '../store/rows.ts';
import type { CommandTable, Flags, Print } from './commands.ts';
import { openCliStore } from '../runtime/store.ts';
import { opens, SEALED_COLUMNS } from '../runtime/sealed-secrets.ts';
import { keyFilePath, readKeyFile, replaceKeyFile } from '../runtime/secret-key.ts';
import { UsageError } from './usage.ts';

/** Sealed values start with the box's version (`v1.`); a clear TOTP secret (Base32) never has a dot. */
const SEALED = /^v\d+\./;
/** A sealed column's value with its row's key, as the rotation reads them. */
const sealedRow = row({ key: text, sealed: text });

interface RotationResult {
  resealed: number;
  /** Already under the new key (a run after an interruption). */
  unchanged: number;
}

class RotationError extends Error {
  override readonly name = 'RotationError';
}

/** Re-seals every sealed value from `from` to `to` in one transaction; throws (nothing changed) on a value neither opens. */
async function resealSecrets(db: Db, from: SecretBox, to: SecretBox): Promise<RotationResult> {
  return db.transaction(async (tx) => {
    const result: RotationResult = { resealed: 0, unchanged: 0 };
    for (const [table, key, column] of SEALED_COLUMNS) {
      const rows = await selectRows(
        tx,
        sealedRow,
        `SELECT ${key} AS key, ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL ORDER BY ${key} FOR UPDATE`,
      );
      for (const row of rows) {
        if (!SEALED.test(row.sealed)) continue; // a TOTP secret still in clear: `serve` seals it at start
        if (opens(to, row.sealed)) {
          result.unchanged += 1;
          continue;
        }
        if (!opens(from, row.sealed))
          throw new RotationError(`${table} ${row.key}: the value opens under neither the old nor the new key; nothing was changed.`);
        await tx.query(`UPDATE ${table} SET ${column} = $2 WHERE ${key} = $1`, [row.key, to.seal(from.open(row.sealed))]);
        result.resealed += 1;
      }
    }
    return result;
  });
}

const HELP = `Usage: service secret-key rotate [--data-dir D] [--json]

Re-seals every secret kept at rest (webhook signing secrets, TOTP secrets) under a new key, in one
transaction. Stop every instance first; start them again with the new SECRET_KEY afterwards.
  OLD_SECRET_KEY   the key in use until now (default: the key file <data dir>/secret.key)
  SECRET_KEY       the new key, at least 32 characters
  --json           print {"resealed","unchanged","keyFileReplaced"}
A value already under the new key is left as is (the command can run again); a value neither key
opens stops the command with nothing changed. With the embedded store, the key file <data dir>/secret.key
then holds the new key (replaced atomically), so the server starts with or without SECRET_KEY.`;

export const secretKeyCommands: CommandTable = {
  groups: { 'secret-key': HELP },
  commands: {
    'secret-key rotate': {
      options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      help: HELP,
      run: ({ values, positionals, print, env }) => rotate(values, positionals, print, env),
    },
  },
};

async function rotate(values: Flags, positionals: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${HELP}`);
  const config = loadConfig({ 'data-dir': typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined }, env);
  const next = config.secretKey;
  if (!next || next.length < 32) throw new UsageError(`Set SECRET_KEY to the new key (at least 32 characters).\n\n${HELP}`);
  if (config.oldSecretKey === next) throw new UsageError('OLD_SECRET_KEY and SECRET_KEY are the same key.');
  const keyFile = await readKeyFile(config.dataDir);
  // A key file that already holds the new key (a rotation done, or interrupted after the file): every value is checked again.
  const old = config.oldSecretKey ?? keyFile;
  if (old === undefined) throw new UsageError('Set OLD_SECRET_KEY to the key in use until now (there is no key file in the data directory).');
  const store = await openCliStore(config, 'secret-key rotate');
  let result: RotationResult;
  try {
    result = await resealSecrets(store.db, createSecretBox(old), createSecretBox(next));
  } catch (err) {
    if (err instanceof RotationError) throw new UsageError(err.message);
    throw err;
  } finally {
    await store.close();
  }
  // The embedded store's key file is the key `serve` uses without SECRET_KEY: from now on the new one.
  const replaceFile = !config.databaseUrl && keyFile !== undefined && keyFile !== next;
  if (replaceFile) await replaceKeyFile(config.dataDir, next);
  const fileNote = !config.databaseUrl && keyFile !== undefined ? ` The key file ${keyFilePath(config.dataDir)} holds the new key.` : '';
  print(
    values.json === true
      ? JSON.stringify({ ...result, keyFileReplaced: replaceFile })
      : `Re-sealed ${result.resealed} secrets under the new key (${result.unchanged} already were).${fileNote}`,
  );
  return 0;
}
