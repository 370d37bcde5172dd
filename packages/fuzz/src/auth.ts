/**
 * @module Credentials supplied by the caller (a setup hook or the CLI) and how each security scheme of the
 * contract applies them to a request: bearer API key, admin session cookie + CSRF header, MCP token, HMAC signature.
 */
import { createHmac } from 'node:crypto';
import { isObject, type OpenApiDocument } from './contract/document.ts';
import type { Operation } from './contract/operations.ts';
import type { PreparedRequest } from './case.ts';

export interface InboundSigning {
  /** The inbound webhook's slug (the `{slug}` of its route). */
  slug?: string;
  /** The inbound webhook's signing secret. */
  secret: string;
  algorithm?: 'sha256' | 'sha512';
  /** Default `X-SERVICE-Signature`. */
  signatureHeader?: string;
  /** Sent with the current unix time when set (default `X-SERVICE-Timestamp`); `null` to send none. */
  timestampHeader?: string | null;
  /** The server's clock in epoch ms (a test app on a fake clock judges the replay window by it). Default Date.now. */
  now?: () => number;
}

export interface Credentials {
  /** `Authorization: Bearer <apiKey>`; the CLI reads it from `--api-key` or `SERVICE_API_KEY`. */
  apiKey?: string;
  /** Admin session: the `Cookie` header value (e.g. `service_session=...`) and the login's `csrfToken`. */
  adminSession?: { cookie: string; csrfToken?: string };
  /** `Authorization: Bearer <mcpToken>` on the MCP routes. */
  mcpToken?: string;
  /** Signs inbound webhook bodies. */
  inbound?: InboundSigning;
  /** Any other scheme, by its name in `components.securitySchemes`: mutate the request to authenticate it. */
  schemes?: Record<string, (request: PreparedRequest) => void>;
}

type Applier = (request: PreparedRequest) => void;

/** What we know how to authenticate: scheme name → applier, built once per run. */
export function credentialAppliers(doc: OpenApiDocument, creds: Credentials): Map<string, Applier> {
  const out = new Map<string, Applier>();
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  for (const [name, raw] of Object.entries(schemes)) {
    const scheme = isObject(raw) ? raw : {};
    const custom = creds.schemes?.[name];
    if (custom) {
      out.set(name, custom);
      continue;
    }
    const applier = defaultApplier(name, scheme, creds);
    if (applier) out.set(name, applier);
  }
  return out;
}

function defaultApplier(name: string, scheme: Record<string, unknown>, creds: Credentials): Applier | undefined {
  const n = name.toLowerCase();
  const where = scheme.in;
  if (/signature|hmac|inbound/.test(n)) {
    const inbound = creds.inbound;
    if (!inbound || typeof inbound.secret !== 'string' || inbound.secret === '') return undefined;
    const header = inbound.signatureHeader ?? (where === 'header' && typeof scheme.name === 'string' ? scheme.name : 'X-SERVICE-Signature');
    return function signInbound(req) {
      setHeader(
        req,
        header,
        createHmac(inbound.algorithm ?? 'sha256', inbound.secret)
          .update(req.body ?? '')
          .digest('hex'),
      );
      const ts = inbound.timestampHeader === undefined ? 'X-SERVICE-Timestamp' : inbound.timestampHeader;
      if (ts) setHeader(req, ts, String(Math.floor((inbound.now ?? Date.now)() / 1000)));
    };
  }
  if (/mcp/.test(n)) return typeof creds.mcpToken === 'string' && creds.mcpToken ? bearer(creds.mcpToken) : undefined;
  if (/admin|session/.test(n) || where === 'cookie') {
    const session = creds.adminSession;
    if (!session || typeof session.cookie !== 'string') return undefined;
    return function adminSession(req) {
      const existing = getHeader(req, 'Cookie');
      setHeader(req, 'Cookie', existing ? `${existing}; ${session.cookie}` : session.cookie);
      if (session.csrfToken && !/^(GET|HEAD|OPTIONS)$/.test(req.method)) setHeader(req, 'X-CSRF-Token', session.csrfToken);
    };
  }
  if (/api.?key|bearer/.test(n) || scheme.scheme === 'bearer') return typeof creds.apiKey === 'string' && creds.apiKey ? bearer(creds.apiKey) : undefined;
  return undefined;
}

function bearer(token: string): Applier {
  return function bearerToken(req) {
    setHeader(req, 'Authorization', `Bearer ${token}`);
  };
}

/**
 * Authenticates `req` for `operation` with the first alternative whose schemes we all hold credentials for.
 * Returns false when the operation needs credentials we lack (the request goes out unauthenticated).
 * `pinned` headers (mutated on purpose) keep their value.
 */
export function authenticate(req: PreparedRequest, operation: Operation, appliers: Map<string, Applier>, pinned: string[] = []): boolean {
  if (operation.security.length === 0) return true;
  for (const alternative of operation.security) {
    const names = Object.keys(alternative);
    if (names.length === 0) return true; // `{}`: anonymous access is an alternative
    if (!names.every((n) => appliers.has(n))) continue;
    const keep = Object.entries(req.headers).filter(([k]) => pinned.some((p) => p.toLowerCase() === k.toLowerCase()));
    for (const n of names) appliers.get(n)!(req);
    for (const [k, v] of keep) setHeader(req, k, v);
    return true;
  }
  return false;
}

/** True when `operation` requires some credential (no anonymous alternative). */
export function requiresAuth(operation: Operation): boolean {
  return operation.security.length > 0 && operation.security.every((alt) => Object.keys(alt).length > 0);
}

/** Sets a header, replacing any spelling of the same name (two spellings would be sent joined by a comma). */
export function setHeader(req: PreparedRequest, name: string, value: string): void {
  for (const k of Object.keys(req.headers)) if (k.toLowerCase() === name.toLowerCase()) delete req.headers[k];
  req.headers[name] = value;
}

export function getHeader(req: PreparedRequest, name: string): string | undefined {
  return Object.entries(req.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}
