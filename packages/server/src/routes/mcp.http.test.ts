/**
 * The MCP bridge's SSE transport over real HTTP (@hono/node-server on a loopback port): the
 * endpoint event, a response pushed on the stream by an RPC call naming the session, the
 * keep-alive comment, another workspace unable to push on the session, and the session removed
 * when the client disconnects.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { zJsonRpcResponse, zMcpEndpoint } from '../../../../generated/zod.ts';
import { createWorkspace } from '../domain/workspaces/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

let t: TestApp;
let server: ServerType;
let base: string;
let token: string;
let otherToken: string;

async function issueToken(key: string): Promise<string> {
  const res = await fetch(`${base}/v1/mcp/tenant/tokens`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  // A short keep-alive so the comment line shows up within the test; production uses 15 s.
  t = await createTestApp({ deps: { mcpKeepAliveMs: 50 } });
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  token = await issueToken(await t.keyWith('mcp:tenant', 'orchestrator:invoke', 'departments:read', 'usage:read'));
  const other = await createWorkspace(t.db, t.clock, 'Other');
  otherToken = await issueToken((await t.services.keys.create(other.id, { name: 'other', scopes: ['mcp:tenant', 'orchestrator:invoke'] })).secret);
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

/** Reads an SSE body block by block (a block ends with a blank line), comments included. */
function blocks(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return async function next(): Promise<string> {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return block;
      }
      const { done, value } = await reader.read();
      if (done) throw new Error('stream ended');
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

/** The next `event: message` block's JSON, skipping keep-alive comments. */
async function nextMessage(next: () => Promise<string>): Promise<unknown> {
  for (;;) {
    const block = await next();
    if (block.startsWith(':')) continue;
    expect(block.split('\n')[0]).toBe('event: message');
    return JSON.parse(block.split('\n')[1]!.replace(/^data: /, ''));
  }
}

function post(path: string, body: unknown, bearer = token) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('MCP SSE transport over HTTP', () => {
  it('endpoint first, responses of the session pushed as message events, keep-alive comments, cleanup on disconnect', async () => {
    const abort = new AbortController();
    const res = await fetch(`${base}/v1/mcp/tenant/sse`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const next = blocks(res.body!);

    const [eventLine, dataLine] = (await next()).split('\n');
    expect(eventLine).toBe('event: endpoint');
    const endpoint = dataLine!.replace(/^data: /, '');
    expect(zMcpEndpoint.parse(endpoint)).toMatch(/^\/v1\/mcp\/tenant\/rpc\?sessionId=mcs_[A-Za-z0-9]{16}$/);
    expect(t.services.mcp.sessions.size).toBe(1);

    // The direct answer and the pushed message are the same JSON-RPC response.
    const direct = await post(endpoint, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'invoke_agent', arguments: { alias: 'Prelude', agentSlug: 'finance', message: 'Outstanding receivables?' } },
    });
    expect(direct.status).toBe(200);
    const answered = zJsonRpcResponse.parse(await direct.json());
    expect(answered).toMatchObject({ id: 7, result: { isError: false } });
    expect(await nextMessage(next)).toEqual(answered);

    // Another workspace naming this session is answered, but nothing reaches this stream.
    const foreign = await post(endpoint, { jsonrpc: '2.0', id: 'foreign', method: 'ping' }, otherToken);
    expect(foreign.status).toBe(200);
    expect(await foreign.json()).toEqual({ jsonrpc: '2.0', id: 'foreign', result: {} });
    // A notification is accepted (202) and pushes nothing either.
    expect((await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    expect((await post(endpoint, { jsonrpc: '2.0', id: 'mine', method: 'ping' })).status).toBe(200);
    expect(await nextMessage(next)).toEqual({ jsonrpc: '2.0', id: 'mine', result: {} });

    // Keep-alive comment lines arrive while the stream is idle.
    let block = await next();
    while (!block.startsWith(':')) block = await next();
    expect(block).toBe(': keep-alive');

    abort.abort();
    await vi.waitFor(() => expect(t.services.mcp.sessions.size).toBe(0), { timeout: 5000, interval: 20 });
    // The closed session is gone: a request naming it is still answered directly.
    const after = await post(endpoint, { jsonrpc: '2.0', id: 8, method: 'ping' });
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
  });

  it('an API key cannot open the stream (401 not_authenticated)', async () => {
    const key = await t.keyWith('mcp:tenant');
    const res = await fetch(`${base}/v1/mcp/tenant/sse`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'not_authenticated', message: 'Unknown or expired MCP token.' });
  });
});
