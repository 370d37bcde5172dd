/**
 * @module The Hono environment of the app: what middleware leaves on the context for handlers.
 */
import type { InboundWebhookTarget } from './domain/inbound-webhooks/service.ts';
import type { RateLimitState } from './middleware/rate-limit/index.ts';

/**
 * Who is calling, as proved by the credential (never by the body). `rpmLimit` is the workspace's
 * ceiling; `ipRpmLimit` its operator's raised per-address ceiling (null: the default per-IP limit).
 */
export type Auth =
  | { scheme: 'apiKey'; workspaceId: string; keyId: string; scopes: string[]; rpmLimit: number; ipRpmLimit: number | null }
  | {
      scheme: 'mcpToken';
      workspaceId: string;
      tokenId: string;
      keyId: string;
      scopes: string[];
      keyScopes: string[];
      rpmLimit: number;
      ipRpmLimit: number | null;
    }
  | { scheme: 'adminSession'; workspaceId: string; userId: string; sessionId: string; role: string; rpmLimit: number; ipRpmLimit: number | null }
  | { scheme: 'operatorToken'; tokenId: string };

/** Request parts after validation by the contract's schemas (parsed and defaulted). */
export interface Valid {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** An inbound event as the inbound front verified it (middleware/inbound). */
export interface VerifiedInbound {
  webhook: InboundWebhookTarget;
  /** The exact bytes that were signed. */
  rawBody: Uint8Array;
  /** The parsed JSON object. */
  payload: unknown;
  signedAtMs: number | null;
}

export type AppVariables = {
  inbound?: VerifiedInbound;
  requestId: string;
  rateLimit?: RateLimitState;
  auth?: Auth;
  valid: Valid;
  operationId: string;
};

export type AppEnv = { Variables: AppVariables };
