/**
 * CORS: server-to-server by default (no CORS header at all, OPTIONS never 405), named browser
 * origins with CORS_ORIGINS (preflight answered for them only, no rate limit, no credential).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseCorsOrigins } from './index.ts';

const PANEL = 'https://console.example.com';
const preflight = (origin: string, method = 'POST') => ({
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type', 'x-request-id': 'req-cors' },
});

describe('CORS, default deployment: server-to-server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a preflight on a known path 204 with Allow, without any Access-Control-Allow-* header (the browser blocks)', async () => {
    const res = await t.app.request('/v1/inference', preflight(PANEL));
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    expect(res.headers.get('x-request-id')).toBe('req-cors');
    expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('sends no CORS header on an actual answer', async () => {
    const res = await t.app.request('/v1/agents', { headers: { origin: PANEL, authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toBeNull();
  });

  it('keeps 404 not_found for OPTIONS on an unknown path', async () => {
    const res = await t.app.request('/nowhere', preflight(PANEL));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not_found', message: 'No such route.' });
  });
});

describe('CORS with CORS_ORIGINS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ deps: { config: { corsOrigins: [PANEL] } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers the preflight of an allowed origin with the exact origin, the path methods and the contract headers', async () => {
    const res = await t.app.request('/runs/run_abc', preflight(PANEL, 'GET'));
    expect(res.status).toBe(204);
    expect(Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary' || name === 'allow'))).toEqual({
      allow: 'GET, HEAD, OPTIONS',
      vary: 'Origin',
      'access-control-allow-origin': PANEL,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, X-CSRF-Token, X-Request-Id, Mcp-Session-Id, MCP-Protocol-Version',
      'access-control-max-age': '600',
    });
    // Not counted against the per-IP limit: no rate-limit headers on a preflight.
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
  });

  it('gives another origin no Access-Control-Allow-* header, and says Vary: Origin', async () => {
    const res = await t.app.request('/v1/inference', preflight('https://evil.example.net'));
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('lets the allowed origin read answers, errors included, and the headers it needs', async () => {
    const ok = await t.app.request('/v1/agents', { headers: { origin: PANEL, authorization: `Bearer ${t.apiKey}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(PANEL);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('access-control-expose-headers')).toBe(
      'X-Request-Id, Retry-After, Retry-After-Ms, X-Should-Retry, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Run-Id, Location, X-Service-Overhead-Ms, Mcp-Session-Id',
    );
    expect(ok.headers.get('vary')).toContain('Origin');
    const refused = await t.app.request('/v1/agents', { headers: { origin: PANEL } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(PANEL);
    const other = await t.app.request('/v1/agents', { headers: { origin: 'https://evil.example.net', authorization: `Bearer ${t.apiKey}` } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS', () => {
  it('takes exact origins, comma-separated', () => {
    expect(parseCorsOrigins(' https://a.example.com, http://localhost:5173 ')).toEqual(['https://a.example.com', 'http://localhost:5173']);
    expect(parseCorsOrigins(undefined)).toEqual([]);
  });

  it.each([
    ['*', 'cannot be "*"'],
    ['https://a.example.com/', 'no path or trailing slash'],
    ['a.example.com', 'is not an origin'],
    ['ftp://a.example.com', 'is not an origin'],
  ])('refuses %s at startup with a clear message', (value, message) => {
    expect(() => loadConfig({}, { CORS_ORIGINS: value })).toThrow(message);
  });
});
