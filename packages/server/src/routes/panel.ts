/**
 * @module The panel's static files at `/panel` (and `/panel/*`, index.html for every client-side route), from
 * the built `packages/panel/dist`, on the API's own origin: no second process. These pages are outside the
 * contract (they are not API operations) and outside the per-IP limits, as the health routes are: they read
 * no store and carry no credential, while every API call the panel makes counts in its own class. Their first
 * middleware says so (`ipLimitClass: 'unlimited'`, middleware/route), as every contract route's does.
 *
 * Strict headers on every answer: a CSP that allows only this origin (no inline script, no other origin),
 * no framing, no sniffing, no referrer. Hashed assets are immutable; index.html is revalidated each time.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { fail } from '../errors.ts';
import { routeMetadata } from '../middleware/route/index.ts';

/** Where `pnpm install` / `pnpm build` leaves the built panel. */
const PANEL_DIST = panelDist();

/**
 * `packages/panel/dist/`, seen from this module in the sources (`packages/server/src/routes/`) or
 * bundled into the compiled build (`packages/server/dist/cli.js`), which sit at different depths; in the
 * self-contained server bundle (`server/cli.js`, see scripts/build-server-bundle.ts), its `panel/` folder.
 */
function panelDist(): string {
  const bundled = fileURLToPath(new URL('../panel/', import.meta.url));
  if (existsSync(join(bundled, 'index.html'))) return bundled;
  for (const up of ['../../../panel/', '../../panel/']) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist') + sep;
  }
  return fileURLToPath(new URL('../../../panel/dist/', import.meta.url));
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Mounts GET (and so HEAD) `/panel`, `/panel/` and `/panel/*`. */
export function mountPanel(app: Hono<AppEnv>, dist: string = PANEL_DIST): void {
  // No operationId: these pages are no operation of the contract (the log line says `unmatched`).
  const metadata = routeMetadata({ ipLimitClass: 'unlimited' });
  const page = async function panel(c: Context<AppEnv>) {
    return servePanel(c, dist);
  };
  app.get('/panel', metadata, page);
  app.get('/panel/*', metadata, page);
}

async function servePanel(c: Context<AppEnv>, dist: string): Promise<Response> {
  const rest = c.req.path.slice('/panel'.length).replace(/^\/+/, '');
  if (rest.startsWith('assets/')) {
    const file = inside(dist, rest);
    const body = file ? await readIfFile(file) : undefined;
    if (!body) throw fail('not_found', 'No such file of the panel.');
    return answer(body, TYPES[extname(file!)] ?? 'application/octet-stream', IMMUTABLE, 200);
  }
  // Every other path is a client-side route of the single-page app.
  const index = await readIfFile(join(dist, 'index.html'));
  if (!index) return answer(Buffer.from(NOT_BUILT), TYPES['.html']!, 'no-store', 503);
  return answer(index, TYPES['.html']!, 'no-cache', 200);
}

function answer(body: Buffer, type: string, cacheControl: string, status: number): Response {
  return new Response(new Uint8Array(body), {
    status,
    headers: { 'Content-Type': type, 'Cache-Control': cacheControl, 'Content-Length': String(body.length), ...SECURITY_HEADERS },
  });
}

/** The file for a request path, or undefined when it would leave the build folder. */
function inside(dist: string, rest: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = normalize(join(dist, decoded));
  return file.startsWith(normalize(dist.endsWith(sep) ? dist : dist + sep)) ? file : undefined;
}

async function readIfFile(file: string): Promise<Buffer | undefined> {
  try {
    if (!(await stat(file)).isFile()) return undefined;
    return await readFile(file);
  } catch {
    return undefined;
  }
}

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Panel not built</title></head>
<body>
<main>
<h1>The panel is not built</h1>
<p>This server serves the web console from <code>packages/panel/dist</code>, which does not exist yet.</p>
<p>Build it from the repository root with <code>pnpm install</code> (it builds the panel) or <code>pnpm --filter @service/panel build</code>, then reload this page. The API itself works without it.</p>
</main>
</body>
</html>
`;
