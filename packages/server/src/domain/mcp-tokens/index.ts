/**
 * @module MCP tokens: a short-lived bearer (`service_mcp_` + 32 base62) for the tenant MCP bridge,
 * issued in exchange for an API key holding `mcp:tenant`. Stored only as a hash; it dies with its
 * expiry or with the key that issued it.
 */
import { type AuditContext, recordAudit } from '../audit/index.ts';
import type { Clock } from '../../clock.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import { newId, randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { bearerToken } from '../keys/index.ts';
import type { Schema } from '../../contract.ts';
import { STANDING_COLUMNS, standingColumns, standingOf, type WorkspaceStanding } from '../standing/index.ts';
import { columnsOf, row, selectRow, text, textArray } from '../../store/rows.ts';

const MCP_SCOPE = 'mcp:tenant';
/** A live MCP token, the scopes of its API key, and its workspace's standing. */
const tokenRow = row({
  ...columnsOf('mcp_tokens', { id: text, workspace_id: text, api_key_id: text, scopes: textArray }),
  key_scopes: textArray,
  ...standingColumns,
});

export const DEFAULT_MCP_TOKEN_SECONDS = 3600;
const TOKEN_PATTERN = /^service_mcp_[0-9A-Za-z]{32}$/;

type IssuedMcpToken = Schema<'McpToken'>;

interface VerifiedMcpToken {
  tokenId: string;
  workspaceId: string;
  keyId: string;
  scopes: string[];
  /** The scopes of the API key that issued the token: the bridge's tools act within them. */
  keyScopes: string[];
  standing: WorkspaceStanding;
}

export type McpTokenService = ReturnType<typeof createMcpTokenService>;

export function createMcpTokenService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** A token of the key's workspace; its only scope is `mcp:tenant` whatever else the key holds. */
    async issue(key: { keyId: string; workspaceId: string }, expiresInSeconds = DEFAULT_MCP_TOKEN_SECONDS, audit?: AuditContext): Promise<IssuedMcpToken> {
      const token = `service_mcp_${randomBase62(32)}`;
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + expiresInSeconds * 1000);
      const id = newId('mcp');
      await db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO mcp_tokens (id, workspace_id, api_key_id, token_hash, scopes, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, key.workspaceId, key.keyId, sha256Hex(token), [MCP_SCOPE], now, expiresAt],
        );
        const details = { expiresAt: expiresAt.toISOString() };
        await recordAudit(tx, audit, key.workspaceId, { action: 'mcp_token.created', target: { type: 'mcp_token', id, label: null }, details }, now);
      });
      return { token, tokenType: 'Bearer', scopes: [MCP_SCOPE], expiresAt: expiresAt.toISOString() };
    },

    /**
     * @throws missing_bearer without a bearer credential; not_authenticated for an unknown or
     *   expired token, or one whose API key was revoked or has expired since
     */
    async verify(authorization: string | undefined): Promise<VerifiedMcpToken> {
      const token = bearerToken(authorization);
      if (!token) throw fail('missing_bearer', 'Send the header Authorization: Bearer <MCP token>.');
      const unknown = fail('not_authenticated', 'Unknown or expired MCP token.');
      if (!TOKEN_PATTERN.test(token)) throw unknown;
      const now = clock.now();
      // Looked up by its hash (a unique index), so no secret is ever compared byte by byte.
      const found = await selectRow(
        db,
        tokenRow,
        `SELECT t.id, t.workspace_id, t.api_key_id, t.scopes, k.scopes AS key_scopes, ${STANDING_COLUMNS}
           FROM mcp_tokens t JOIN api_keys k ON k.id = t.api_key_id JOIN workspaces w ON w.id = t.workspace_id
         WHERE t.token_hash = $1 AND t.expires_at > $2 AND k.revoked_at IS NULL AND k.expires_at > $2`,
        [sha256Hex(token), now],
      );
      if (!found) throw unknown;
      return {
        tokenId: found.id,
        workspaceId: found.workspace_id,
        keyId: found.api_key_id,
        scopes: found.scopes,
        keyScopes: found.key_scopes,
        standing: standingOf(found),
      };
    },
  };
}
