/**
 * @module The operator's credential, owner of the `operator_tokens` table. An operator token
 * (`service_op_` + 32 base62) is created by the first start and by `service operator-token create`,
 * printed once and stored only as a sha256 hash, looked up by that hash. `OPERATOR_TOKEN` in the
 * environment is accepted too, compared in constant time. Nothing else is an operator credential.
 */
import type { Clock } from '../../clock.ts';
import { constantTimeEqual, sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { selectRow, tableRow, text } from '../../store/rows.ts';
import { bearerToken } from '../keys/index.ts';

const OPERATOR_TOKEN_PREFIX = 'service_op_';
/** The shortest `OPERATOR_TOKEN` the server accepts from its environment. */
export const MIN_ENV_TOKEN_LENGTH = 32;

interface VerifiedOperator {
  /** The stored token's id, or `env` for OPERATOR_TOKEN. */
  tokenId: string;
}

/** Issues an operator token; the answer is the only place the token appears. */
export async function createOperatorToken(db: Db | Tx, clock: Clock): Promise<string> {
  const token = `${OPERATOR_TOKEN_PREFIX}${randomBase62(32)}`;
  await db.query(`INSERT INTO operator_tokens (id, token_hash, created_at) VALUES ($1, $2, $3)`, [newId('opt'), sha256Hex(token), clock.now()]);
  return token;
}

export type OperatorService = ReturnType<typeof createOperatorService>;

export function createOperatorService(deps: { db: Db; envToken?: string | undefined }) {
  const envHash = deps.envToken ? sha256Hex(deps.envToken) : undefined;
  if (deps.envToken !== undefined && deps.envToken.length < MIN_ENV_TOKEN_LENGTH) {
    throw new Error(`OPERATOR_TOKEN must have at least ${MIN_ENV_TOKEN_LENGTH} characters`);
  }
  return {
    /** @throws missing_bearer without a bearer credential, not_authenticated for any other token */
    async verify(authorization: string | undefined): Promise<VerifiedOperator> {
      const token = bearerToken(authorization);
      if (!token) throw fail('missing_bearer', 'Send the header Authorization: Bearer <operator token>.');
      const hash = sha256Hex(token);
      if (envHash && constantTimeEqual(hash, envHash)) return { tokenId: 'env' };
      if (token.startsWith(OPERATOR_TOKEN_PREFIX)) {
        // Looked up by its hash (a unique index): no stored secret is compared byte by byte.
        const found = await selectRow(deps.db, tableRow('operator_tokens', { id: text }), `SELECT id FROM operator_tokens WHERE token_hash = $1`, [hash]);
        if (found) return { tokenId: found.id };
      }
      throw fail('not_authenticated', 'Unknown operator token.');
    },
  };
}
