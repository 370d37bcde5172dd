/**
 * @module Browser clients (CORS). The API is server-to-server by default: no CORS header is sent,
 * so a page on another origin cannot read an answer. An operator lets named browser origins in with
 * `CORS_ORIGINS` (exact origins, comma-separated; `*` is refused because the admin routes use a
 * session cookie). The panel is served from the service's own origin and needs none of this.
 *
 * - `OPTIONS` on a path of the contract answers `204` with `Allow`, never 405; for an allowed origin
 *   asking a preflight, with the Access-Control-Allow-* headers (the path's methods, the request
 *   headers the contract uses, credentials, a 10-minute max age). Preflights are neither rate-limited
 *   nor authenticated. `OPTIONS` on an unknown path is the usual `404 not_found`.
 * - Any other answer to an allowed origin carries Access-Control-Allow-Origin (that origin),
 *   Access-Control-Allow-Credentials and the response headers a client needs to read.
 * Every answer that depends on the origin says `Vary: Origin`.
 */
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';

/** Request headers the contract's operations read (names are case-insensitive). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-CSRF-Token', 'X-Request-Id', 'Mcp-Session-Id', 'MCP-Protocol-Version'];
/** Response headers a browser client may read. */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'Retry-After-Ms',
  'X-Should-Retry',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  // An invocation's run (a stream resumes with it), where a background run is read, and the time the service added.
  'X-Run-Id',
  'Location',
  'X-Service-Overhead-Ms',
  // The MCP bridge's Streamable HTTP session, answered to initialize.
  'Mcp-Session-Id',
];
const MAX_AGE_SECONDS = 600;

interface CorsOptions {
  /** Exact allowed origins (`https://app.example.com`); empty: server-to-server only. */
  origins: readonly string[];
  /** Methods of each known path, as Hono mounts it (`/runs/:run_id`), for `Allow` and preflights. */
  methodsByPath: ReadonlyMap<string, readonly string[]>;
}

export function cors(options: CorsOptions): MiddlewareHandler {
  const allowed = new Set(options.origins);
  return async function cors(c, next) {
    const origin = c.req.header('origin');
    const trusted = origin !== undefined && allowed.has(origin);
    if (c.req.method === 'OPTIONS') {
      const methods = knownPathMethods(c, options.methodsByPath);
      if (methods) {
        const headers: Record<string, string> = { Allow: [...methods, 'OPTIONS'].join(', ') };
        if (allowed.size > 0) headers.Vary = 'Origin';
        if (trusted && c.req.header('access-control-request-method')) {
          Object.assign(headers, {
            'Access-Control-Allow-Origin': origin,
            'Access-Control-Allow-Credentials': 'true',
            'Access-Control-Allow-Methods': methods.join(', '),
            'Access-Control-Allow-Headers': ALLOWED_HEADERS.join(', '),
            'Access-Control-Max-Age': String(MAX_AGE_SECONDS),
          });
        }
        return c.body(null, 204, headers);
      }
    }
    await next();
    if (allowed.size === 0) return;
    c.res.headers.append('Vary', 'Origin');
    if (!trusted) return;
    c.res.headers.set('Access-Control-Allow-Origin', origin);
    c.res.headers.set('Access-Control-Allow-Credentials', 'true');
    c.res.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
  };
}

/** The methods of the contract path this request matched, or undefined for an unknown path. */
function knownPathMethods(c: Parameters<MiddlewareHandler>[0], methodsByPath: ReadonlyMap<string, readonly string[]>): readonly string[] | undefined {
  for (const route of matchedRoutes(c)) {
    const methods = methodsByPath.get(route.path);
    if (methods) return methods;
  }
  return undefined;
}

/**
 * `CORS_ORIGINS` read and checked: each entry an exact `http(s)://host[:port]` origin with nothing
 * after it. Throws with a message naming the bad entry.
 */
export function parseCorsOrigins(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    if (entry === '*') {
      throw new Error('CORS_ORIGINS cannot be "*": the admin routes use a session cookie, so list each browser origin exactly.');
    }
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin such as https://app.example.com.`);
    }
    if (!['http:', 'https:'].includes(url.protocol) || url.origin !== entry) {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash).`);
    }
    return entry;
  });
}
