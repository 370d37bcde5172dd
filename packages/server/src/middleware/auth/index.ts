/**
 * @module Authentication and scope checks for one route, from the route's `security` list
 * (alternatives: any one entry is enough). The caller's identity goes to `c.get('auth')`.
 *
 * - apiKey: `Authorization: Bearer service_sk_live_…`; errors missing_bearer, api_key_not_found,
 *   api_key_invalid, then scope_required naming the scope.
 * - adminSession: the `service_session` cookie; not_authenticated, then role_forbidden (role or
 *   two-step verification), and on writes the `X-CSRF-Token` header (forbidden when missing or wrong).
 * - mcpToken: `Authorization: Bearer service_mcp_…`; missing_bearer, not_authenticated, scope_required.
 * - operatorToken: `Authorization: Bearer <operator token>`; missing_bearer, not_authenticated.
 * - A key's or MCP token's workspace must be in good standing: suspended → tenant_forbidden, payment
 *   pending → payment_not_completed (domain/standing/), checked before the scopes. A session
 *   reads in any standing, but writes in bad standing only where the operation is `x-standing-exempt` (the
 *   writes that stop, revoke or leave): checked here, once, so no handler can forget it.
 * - inboundSignature: not here; those routes are mounted behind their own front, middleware/inbound.
 *   Should one reach this middleware it answers 501 not_implemented (fail-closed: no check, no entry).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { fail } from '../../errors.ts';
import { requireOneOf, type KeyService } from '../../domain/keys/index.ts';
import type { McpTokenService } from '../../domain/mcp-tokens/index.ts';
import type { OperatorService } from '../../domain/operators/index.ts';
import { requireGoodStanding } from '../../domain/standing/index.ts';
import { requireAdmin, requireCsrf, SESSION_COOKIE, type SessionService } from '../../domain/sessions/index.ts';
import type { SecurityRequirement, SecurityScheme } from '../../routes/route-spec.ts';

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

/** Context variables this middleware provides (as Hono's own `JwtVariables`); absent on a route without security. */
export type AuthVariables = { auth?: Auth };

interface AuthServices {
  keys: KeyService;
  sessions: SessionService;
  mcpTokens: McpTokenService;
  operators: OperatorService;
}

interface AuthenticateOptions {
  security: readonly SecurityRequirement[];
  /**
   * The route lets a key restricted to one agent (`orchestrator:invoke:agent:<slug>`) stand for
   * `orchestrator:invoke`; its handler then checks the target agent with `mayInvokeAgent`.
   */
  agentTargeted?: boolean;
  /** The session route that any signed-in user may call (logout), whatever the role. */
  anyRole?: boolean;
  /** A session write still allowed while the workspace is suspended or its payment pending (x-standing-exempt). */
  standingExempt?: boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function authenticate(services: AuthServices, options: AuthenticateOptions): MiddlewareHandler<{ Variables: AuthVariables }> {
  const { security } = options;
  const schemes = [...new Set(security.map((s) => s.scheme))];
  return async function authenticate(c, next) {
    if (security.length === 0) return next();
    const scheme = pickScheme(c, schemes);
    const alternatives = security.filter((s) => s.scheme === scheme).map((s) => s.scopes);
    switch (scheme) {
      case 'apiKey': {
        const key = await services.keys.verify(c.req.header('authorization'));
        c.set('auth', {
          scheme,
          workspaceId: key.workspaceId,
          keyId: key.keyId,
          scopes: key.scopes,
          rpmLimit: key.standing.rpmLimit,
          ipRpmLimit: key.standing.ipRpmLimit,
        });
        requireGoodStanding(key.standing);
        requireOneOf(key.scopes, alternatives, { agentTargeted: options.agentTargeted ?? false });
        break;
      }
      case 'mcpToken': {
        const { standing, ...token } = await services.mcpTokens.verify(c.req.header('authorization'));
        c.set('auth', { scheme, ...token, rpmLimit: standing.rpmLimit, ipRpmLimit: standing.ipRpmLimit });
        requireGoodStanding(standing);
        requireOneOf(token.scopes, alternatives);
        break;
      }
      case 'adminSession': {
        const session = await services.sessions.authenticate(getCookie(c, SESSION_COOKIE));
        if (!options.anyRole) requireAdmin(session);
        if (!SAFE_METHODS.has(c.req.method)) {
          requireCsrf(session, c.req.header('x-csrf-token'));
          // Signing in and reading stay possible (usage, runs, what to settle); creating credentials,
          // integrations, members or spending does not.
          if (!options.standingExempt) requireGoodStanding(session.standing);
        }
        const auth: Auth = {
          scheme,
          workspaceId: session.workspaceId,
          userId: session.userId,
          sessionId: session.sessionId,
          role: session.role,
          rpmLimit: session.rpmLimit,
          ipRpmLimit: session.ipRpmLimit,
        };
        c.set('auth', auth);
        break;
      }
      case 'operatorToken': {
        const operator = await services.operators.verify(c.req.header('authorization'));
        c.set('auth', { scheme, tokenId: operator.tokenId });
        break;
      }
      case 'inboundSignature':
        throw fail('not_implemented', 'This route is not available on this deployment yet.');
    }
    await next();
  };
}

/**
 * With several schemes on one route, the credential sent decides: an MCP token, an API key or a
 * session cookie. Otherwise the first scheme listed, whose error tells what is missing.
 */
function pickScheme(c: Context, schemes: SecurityScheme[]): SecurityScheme {
  if (schemes.length === 1) return schemes[0]!;
  const bearer = c.req.header('authorization') ?? '';
  if (schemes.includes('mcpToken') && /^Bearer\s+service_mcp_/i.test(bearer)) return 'mcpToken';
  if (schemes.includes('apiKey') && /^Bearer\s/i.test(bearer)) return 'apiKey';
  if (schemes.includes('adminSession') && getCookie(c, SESSION_COOKIE)) return 'adminSession';
  return schemes[0]!;
}
