/**
 * The panel's static files: index.html for every client-side route, immutable hashed assets, strict headers,
 * nothing outside the build folder, and a page that says how to build the panel when it is missing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEnv } from '../app-env.ts';
import { errorMapper } from '../middleware/errors/index.ts';
import { mountPanel } from './panel.ts';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'panel-dist-'));
  mkdirSync(join(dir, 'dist', 'assets'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'index.html'), '<!doctype html><title>panel</title><script type="module" src="/panel/assets/app-1a2b.js"></script>');
  writeFileSync(join(dir, 'dist', 'assets', 'app-1a2b.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'outside');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function appOn(dist: string) {
  const app = new Hono<AppEnv>();
  mountPanel(app, dist);
  app.onError(errorMapper({ log: () => undefined }));
  return app;
}

describe('the panel route', () => {
  it.each(['/panel', '/panel/', '/panel/runs', '/panel/runs/run_123', '/panel/settings/keys'])(
    'answers index.html for %s, revalidated, with a strict CSP',
    async (path) => {
      const res = await appOn(join(dir, 'dist')).request(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await res.text()).toContain('<title>panel</title>');
    },
  );

  it('serves a hashed asset as immutable, with its type', async () => {
    const res = await appOn(join(dir, 'dist')).request('/panel/assets/app-1a2b.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('console.log(1)');
  });

  it.each(['/panel/assets/missing.js', '/panel/assets/..%2f..%2fsecret.txt', '/panel/assets/..%5c..%5csecret.txt', '/panel/assets/bad%zz'])(
    'answers 404 not_found for %s, never a file outside the build',
    async (path) => {
      const res = await appOn(join(dir, 'dist')).request(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'not_found', message: 'No such file of the panel.' });
    },
  );

  it('leaves dot segments to URL parsing: /panel/assets/%2e%2e/… is no longer a panel path', async () => {
    const res = await appOn(join(dir, 'dist')).request('/panel/assets/%2e%2e/%2e%2e/secret.txt');
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('outside');
  });

  it('says how to build the panel when the build is missing', async () => {
    const res = await appOn(join(dir, 'nothing-here')).request('/panel');
    expect(res.status).toBe(503);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).toContain('The panel is not built');
    expect(page).toContain('pnpm install');
  });
});
