/**
 * The tenant MCP bridge over Streamable HTTP (`/v1/mcp/tenant`), driven by the official client
 * (`@modelcontextprotocol/sdk`, its `StreamableHTTPClientTransport`) against the real server over loopback HTTP,
 * on both stores: the session from `initialize`, the contract's tool list (the same as the SSE transport's), a tool
 * that reads and one that changes something, a wrong or missing token (the spec's error body), a tool whose
 * operation needs a scope the key lacks, another workspace's run and session (404 as absent), the session ended by
 * `DELETE` (then `404`, and the client initialises again), a session of another instance (`404`, and the client
 * initialises again there), and the transport's own rules (GET 405, a missing session header, an unsupported
 * protocol revision, a notification). The session limits (per workspace, idle) at the end, on one store: sessions
 * live in the instance's memory, not in the store.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { mcpTools } from '../contract.ts';
import { SERVER_INFO } from '../domain/mcp/index.ts';
import { randomBase62 } from '../random.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { testBackends, type TestStore } from '@service/testing/store';

const PATH = '/v1/mcp/tenant';
const ALL_SCOPES = ['mcp:tenant', 'orchestrator:invoke', 'departments:read', 'usage:read'];

/** Serves an app's fetch on a loopback port. */
async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<{ server: ServerType; base: string }> {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const closeServer = (server: ServerType | undefined) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

/** The official client on the bridge with this token; `sessionId` resumes a session instead of initialising one. */
async function connect(base: string, token: string, sessionId?: string) {
  const client = new Client({ name: 'bridge-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${PATH}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(sessionId && { sessionId }),
  });
  await client.connect(transport);
  return { client, transport };
}

/** What a refused request of the client carried: its HTTP status and the server's error body. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number | undefined; body: unknown }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StreamableHTTPError);
  const { code, message } = error as StreamableHTTPError;
  return { status: code, body: JSON.parse(/\{.*\}$/s.exec(message)![0]) };
}

/** The tool result's structured content, parsed by the client. */
const structured = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent;

describe.each(testBackends())('the MCP bridge over Streamable HTTP on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let other: TestApp;
  let a: { server: ServerType; base: string };
  let b: { server: ServerType; base: string };
  let key: string;
  let token: string;
  let otherToken: string;

  async function issueToken(base: string, apiKey: string): Promise<string> {
    const res = await fetch(`${base}/v1/mcp/tenant/tokens`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  }

  const rest = async (path: string, bearer = key) => {
    const res = await fetch(`${a.base}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  /** One message over plain fetch, for what the client does not show (headers, exact bodies). */
  const post = (message: unknown, headers: Record<string, string>) =>
    fetch(`${a.base}${PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(message),
    });

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    other = await createTestApp({ db: store.db });
    a = await listen(t.app.fetch);
    // A second instance on the same store, as behind a load balancer: same tokens, its own sessions.
    const second = createApp({ db: await store.peer(), clock: t.clock, logError: () => {} });
    b = await listen(second.app.fetch);
    key = await t.keyWith(...ALL_SCOPES);
    token = await issueToken(a.base, key);
    otherToken = await issueToken(a.base, await other.keyWith(...ALL_SCOPES));
  });
  afterAll(async () => {
    await closeServer(a?.server);
    await closeServer(b?.server);
    await t?.close();
    await other?.close();
    await store?.cleanup();
  });

  it("initialises a session and lists the contract's tools, the same list as the SSE transport's", async () => {
    const { client, transport } = await connect(a.base, token);
    try {
      expect(transport.sessionId).toMatch(/^mcs_[A-Za-z0-9]{32}$/);
      expect(client.getServerVersion()).toEqual(SERVER_INFO);
      expect(client.getServerCapabilities()).toEqual({ tools: {} });
      const { tools } = await client.listTools();
      const expected = mcpTools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
      expect(tools).toEqual(expected);
      const sse = await fetch(`${a.base}/v1/mcp/tenant/rpc`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(((await sse.json()) as { result: { tools: unknown } }).result.tools).toEqual(tools);
    } finally {
      await client.close();
    }
  });

  it('a tool that reads answers what its operation answers; one that changes something starts a run', async () => {
    const { client } = await connect(a.base, token);
    try {
      const usage = await client.callTool({ name: 'get_usage', arguments: {} });
      expect(usage.isError).toBe(false);
      expect(structured(usage)).toEqual((await rest('/v1/usage')).body);

      const invoked = await client.callTool({
        name: 'invoke_agent',
        arguments: { alias: 'Prelude', agentSlug: 'finance', message: 'What is our outstanding receivables total?' },
      });
      expect(invoked.isError).toBe(false);
      const { runId, content } = structured(invoked);
      expect(runId).toMatch(/^run_[A-Za-z0-9]{16,32}$/);
      const run = await rest(`/v1/runs/${runId}`);
      expect(run.status).toBe(200);
      expect(run.body.run).toMatchObject({ id: runId, source: 'mcp', status: 'completed', agentSlug: 'finance', alias: 'Prelude', content });

      const read = await client.callTool({ name: 'get_run', arguments: { runId } });
      expect(structured(read)).toEqual(run.body);
    } finally {
      await client.close();
    }
  });

  it("a wrong or missing token is refused with the spec's error body, before any session", async () => {
    const wrong = await refusal(connect(a.base, `service_mcp_${randomBase62(32)}`));
    expect(wrong).toEqual({ status: 401, body: { error: 'not_authenticated', message: 'Unknown or expired MCP token.' } });
    // An API key is not an MCP token, even one holding mcp:tenant.
    expect(await refusal(connect(a.base, key))).toEqual(wrong);

    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const none = await post(initialize, {});
    expect(none.status).toBe(401);
    expect(none.headers.get('mcp-session-id')).toBeNull();
    expect(none.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await none.json()).toEqual({ error: 'missing_bearer', message: 'Send the header Authorization: Bearer <MCP token>.' });
  });

  it('a tool needs the scopes of its operation, held by the key that issued the token, as the route does', async () => {
    const readerKey = await t.keyWith('mcp:tenant', 'departments:read');
    const { client } = await connect(a.base, await issueToken(a.base, readerKey));
    try {
      expect((await client.callTool({ name: 'list_agents', arguments: {} })).isError).toBe(false);
      const refused = await client.callTool({ name: 'get_usage', arguments: {} });
      expect(refused).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: "The API key that issued this MCP token lacks the scope 'usage:read'." }],
        structuredContent: { error: 'scope_required' },
      });
      expect((await rest('/v1/usage', readerKey)).body).toEqual({ error: 'scope_required', message: "This credential lacks the scope 'usage:read'." });
    } finally {
      await client.close();
    }

    // A key bound to one agent invokes that agent, and reads runs neither over MCP nor over REST (getRunV1).
    const salesKey = await t.keyWith('mcp:tenant', 'orchestrator:invoke:agent:sales');
    const sales = await connect(a.base, await issueToken(a.base, salesKey));
    try {
      const own = await sales.client.callTool({ name: 'invoke_agent', arguments: { alias: 'Prelude', agentSlug: 'sales', message: 'Draft a follow-up.' } });
      expect(own.isError).toBe(false);
      const elsewhere = await sales.client.callTool({
        name: 'invoke_agent',
        arguments: { alias: 'Prelude', agentSlug: 'finance', message: 'Close the books.' },
      });
      expect(elsewhere.isError).toBe(true);
      const runId = structured(own).runId as string;
      const read = await sales.client.callTool({ name: 'get_run', arguments: { runId } });
      expect(read).toMatchObject({ isError: true, structuredContent: { error: 'scope_required' } });
      expect((await rest(`/v1/runs/${runId}`, salesKey)).status).toBe(403);
    } finally {
      await sales.client.close();
    }
  });

  it("another workspace's run reads as absent, and its session is not found", async () => {
    const mine = await connect(a.base, token);
    const theirs = await connect(a.base, otherToken);
    try {
      const invoked = await mine.client.callTool({ name: 'invoke_agent', arguments: { alias: 'Prelude', agentSlug: 'legal', message: 'Review the NDA' } });
      const runId = structured(invoked).runId as string;
      const foreign = await theirs.client.callTool({ name: 'get_run', arguments: { runId } });
      expect(foreign).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Run not found.' }], structuredContent: { error: 'not_found' } });
      expect(JSON.stringify(foreign)).not.toContain('Review the NDA');

      // The other workspace's token naming my session: 404, as for a session that never existed.
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const intruding = await post(ping, { authorization: `Bearer ${otherToken}`, 'mcp-session-id': mine.transport.sessionId! });
      const madeUp = await post(ping, { authorization: `Bearer ${otherToken}`, 'mcp-session-id': `mcs_${randomBase62(32)}` });
      expect(intruding.status).toBe(404);
      const gone = { error: 'not_found', message: 'This MCP session does not exist or has ended; send initialize to start a new one.' };
      expect(await intruding.json()).toEqual(gone);
      expect(await madeUp.json()).toEqual(gone);
      const ending = await fetch(`${a.base}${PATH}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${otherToken}`, 'mcp-session-id': mine.transport.sessionId! },
      });
      expect(ending.status).toBe(404);
      expect(await ending.json()).toEqual(gone);
      // Mine still works.
      expect(await mine.client.ping()).toEqual({});
    } finally {
      await mine.client.close();
      await theirs.client.close();
    }
  });

  it('DELETE ends the session: the next request is 404 and the client initialises a new one', async () => {
    const { client, transport } = await connect(a.base, token);
    const ended = transport.sessionId!;
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    await client.close();

    // The ended session, resumed by a client that still holds its id.
    const stale = await connect(a.base, token, ended);
    expect(await refusal(stale.client.listTools())).toEqual({
      status: 404,
      body: { error: 'not_found', message: 'This MCP session does not exist or has ended; send initialize to start a new one.' },
    });
    await stale.client.close();
    const fresh = await connect(a.base, token);
    expect(fresh.transport.sessionId).not.toBe(ended);
    expect((await fresh.client.listTools()).tools).toHaveLength(mcpTools.length);
    await fresh.client.close();
  });

  it('a session opened on another instance is not found there (404); the client initialises again on it', async () => {
    const onA = await connect(a.base, token);
    const onB = await connect(b.base, token, onA.transport.sessionId);
    expect((await refusal(onB.client.listTools())).status).toBe(404);
    await onB.client.close();
    const again = await connect(b.base, token);
    expect((await again.client.callTool({ name: 'get_usage', arguments: {} })).isError).toBe(false);
    // Each instance holds its own sessions; A's is untouched.
    expect(await onA.client.ping()).toEqual({});
    await again.client.close();
    await onA.client.close();
  });

  it('transport rules: GET 405, a request without its session 400, an unknown revision 400, a batch 400, a notification 202', async () => {
    const { client, transport } = await connect(a.base, token);
    try {
      const auth = { authorization: `Bearer ${token}` };
      const get = await fetch(`${a.base}${PATH}`, { headers: { ...auth, accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST, DELETE');
      expect(await get.json()).toEqual({ error: 'method_not_allowed', message: 'Allowed methods: POST, DELETE.' });

      const noSession = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, auth);
      expect(noSession.status).toBe(400);
      expect(await noSession.json()).toEqual({
        error: 'invalid_request',
        message: "Missing header 'Mcp-Session-Id': send the one the initialize answer gave, or initialize first.",
        param: 'mcp-session-id',
      });

      const session = { ...auth, 'mcp-session-id': transport.sessionId! };
      const revision = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { ...session, 'mcp-protocol-version': '1999-01-01' });
      expect(revision.status).toBe(400);
      expect(await revision.json()).toMatchObject({ error: 'invalid_request', param: 'mcp-protocol-version' });

      const batch = await post([{ jsonrpc: '2.0', id: 4, method: 'ping' }], session);
      expect(batch.status).toBe(400);
      expect(await batch.json()).toMatchObject({ error: 'invalid_body' });

      const notification = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } }, session);
      expect(notification.status).toBe(202);
      expect(await notification.text()).toBe('');
      const answered = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, { ...session, 'mcp-protocol-version': '2025-06-18' });
      expect(answered.status).toBe(200);
      expect(answered.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answered.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(await answered.json()).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    } finally {
      await client.close();
    }
  });
});

describe('Streamable HTTP session limits', () => {
  let t: TestApp;
  let server: { server: ServerType; base: string };
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ deps: { mcpSessionLimits: { perWorkspace: 2, idleMs: 60_000 } } });
    server = await listen(t.app.fetch);
    const res = await fetch(`${server.base}/v1/mcp/tenant/tokens`, { method: 'POST', headers: { authorization: `Bearer ${await t.keyWith('mcp:tenant')}` } });
    token = ((await res.json()) as { token: string }).token;
  });
  afterAll(async () => {
    await closeServer(server?.server);
    await t?.close();
  });

  it("a workspace's sessions past its cap close its least recently used; an idle one closes", async () => {
    const first = await connect(server.base, token);
    const second = await connect(server.base, token);
    // Using the first makes the second the least recently used.
    expect(await first.client.ping()).toEqual({});
    const third = await connect(server.base, token);
    expect(t.services.mcp.httpSessions.count(t.workspaceId)).toBe(2);
    expect((await refusal(second.client.ping())).status).toBe(404);
    expect(await first.client.ping()).toEqual({});
    expect(await third.client.ping()).toEqual({});

    t.clock.advance(60_000);
    expect((await refusal(first.client.ping())).status).toBe(404);
    expect(t.services.mcp.httpSessions.count(t.workspaceId)).toBe(0);
    for (const { client } of [first, second, third]) await client.close();
  });
});
