import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFuzz } from '../src/runner.ts';
import { httpTransport } from '../src/transport.ts';
import { API_KEY, CSRF, INBOUND, MCP_TOKEN, SESSION, createMiniApp, type Bug } from './fixtures/mini-app.ts';

/** The fixture app behind a real loopback port (node:http → Request → app.request → Response). */
function serve(bugs: Bug[], throttle?: (n: number) => string | undefined): Promise<{ server: Server; url: string }> {
  const app = createMiniApp(bugs);
  let n = 0;
  const server = createServer(async (req, res) => {
    // A deployment's request-rate limit: some requests answer 429 with this Retry-After instead.
    const retryAfter = throttle?.((n += 1));
    if (retryAfter !== undefined) {
      for await (const _ of req);
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter, 'x-request-id': `req_${n}` });
      res.end(JSON.stringify({ error: 'rate_limit_exceeded', retryAfterSec: Number(retryAfter) }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const headers = Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v] as [string, string]]));
    const response = await app.request(req.url ?? '/', { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    // Streamed, so an event stream that stays open still delivers its first events.
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('over real HTTP', () => {
  let good: { server: Server; url: string };
  let broken: { server: Server; url: string };
  beforeAll(async () => {
    good = await serve([]);
    broken = await serve(['no-405', 'wrong-content-type']);
  });
  afterAll(() => {
    good.server.closeAllConnections();
    broken.server.closeAllConnections();
    good.server.close();
    broken.server.close();
  });

  const options = {
    contract: new URL('./fixtures/mini.openapi.json', import.meta.url).pathname,
    seed: 21,
    maxCases: 300,
    transportOptions: { idleTimeoutMs: 200 },
    credentials: { apiKey: API_KEY, mcpToken: MCP_TOKEN, adminSession: { cookie: SESSION, csrfToken: CSRF }, inbound: { ...INBOUND } },
    parameters: { slug: INBOUND.slug },
  };

  it('waits out a request-rate 429 and sends the case again: no false failure', async () => {
    const limited = await serve([], (n) => (n % 5 === 0 ? '0' : undefined));
    try {
      const r = await runFuzz({ ...options, baseUrl: limited.url });
      expect(r.failures.map((f) => `${f.check}: ${f.message}`)).toEqual([]);
      expect(r.warnings.filter((w) => w.includes('429'))).toEqual([]);
    } finally {
      limited.server.closeAllConnections();
      limited.server.close();
    }
  });

  it('never counts a 429 rate_limit_exceeded as a failure, even one it cannot wait out', async () => {
    const closed = await serve([], () => '3600');
    try {
      const r = await runFuzz({ ...options, baseUrl: closed.url, maxCases: 40 });
      expect(r.failures.map((f) => `${f.check}: ${f.message}`)).toEqual([]);
      expect(r.warnings.some((w) => /case\(s\) still answered 429 rate_limit_exceeded/.test(w))).toBe(true);
    } finally {
      closed.server.closeAllConnections();
      closed.server.close();
    }
  });

  it('finds nothing on a correct server', async () => {
    const r = await runFuzz({ ...options, baseUrl: good.url });
    expect(r.failures.map((f) => `${f.check}: ${f.message}`)).toEqual([]);
    expect(r.cases).toBeGreaterThan(250);
    expect(r.baseUrl).toBe(good.url);
  });

  it('catches the broken behaviours and reproduces them against the base URL', async () => {
    const r = await runFuzz({ ...options, baseUrl: broken.url, operations: ['listRuns'] });
    const checks = r.failures.map((f) => f.check);
    expect(checks).toContain('unsupported_method');
    expect(checks).toContain('content_type_conformance');
    expect(r.failures[0]!.curl).toContain(`'${broken.url}/runs`);
  });

  it('stops reading a stream that stays open, and keeps what arrived', async () => {
    const open = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"delta":"a"}\n\n');
    });
    await new Promise<void>((r) => open.listen(0, '127.0.0.1', () => r()));
    const t = httpTransport(`http://127.0.0.1:${(open.address() as AddressInfo).port}`, { idleTimeoutMs: 200 });
    const res = await t.send({ method: 'GET', path: '/v1/mcp/tenant/sse', headers: {} });
    expect(res.truncated).toBe(true);
    expect(res.text).toBe('data: {"delta":"a"}\n\n');
    open.closeAllConnections();
    open.close();
  });
});
