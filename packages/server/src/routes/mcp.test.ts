/**
 * The tenant MCP bridge through the app (app.request): initialize, ping, tools/list, each tool,
 * the JSON-RPC error codes, notifications (202), tool failures as `isError` results, workspace
 * isolation, authentication by MCP token only, and no provider or model name in any response.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zCallMcpRpcResponse, zJsonRpcResponse } from '../../../../generated/zod.ts';
import { setManualKillSwitch } from '../domain/spending/index.ts';
import { createWorkspace } from '../domain/workspaces/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

let t: TestApp;
let token: string;
let apiKey: string;
/** Every response body of the suite, checked at the end for provider and model names. */
const seen: string[] = [];

const PROVIDER_NAMES = /openai|anthropic|claude|gpt-?\d|gemini|llama|mistral|cohere|azure/i;

async function issueToken(key: string): Promise<string> {
  const res = await t.app.request('/v1/mcp/tenant/tokens', { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  t = await createTestApp();
  apiKey = await t.keyWith('orchestrator:invoke', 'departments:read', 'usage:read');
  token = await issueToken(await t.keyWith('mcp:tenant', 'orchestrator:invoke', 'departments:read', 'usage:read'));
});
afterAll(async () => {
  await t.close();
});

interface Rpc {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, any> | null;
}

async function post(body: unknown, options: { bearer?: string | null; query?: string } = {}): Promise<Rpc> {
  const bearer = options.bearer === undefined ? token : options.bearer;
  const res = await t.app.request(`/v1/mcp/tenant/rpc${options.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

let nextId = 1;
async function rpc(method: string, params?: Record<string, unknown>, bearer?: string): Promise<Rpc> {
  const r = await post({ jsonrpc: '2.0', id: nextId++, method, ...(params ? { params } : {}) }, { bearer });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  zCallMcpRpcResponse.parse(r.body);
  zJsonRpcResponse.parse(r.body);
  return r;
}

const callTool = (name: string, args?: Record<string, unknown>, bearer?: string) => rpc('tools/call', { name, ...(args ? { arguments: args } : {}) }, bearer);

async function getJson(path: string): Promise<unknown> {
  const res = await t.app.request(path, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(200);
  return res.json();
}

describe('MCP methods', () => {
  it('initialize answers the asked protocol version, the tools capability and a neutral server name', async () => {
    const r = await rpc('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expect(r.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(r.body).toEqual({
      jsonrpc: '2.0',
      id: r.body!.id,
      result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'agent-invocation-service', version: '1.0.0' } },
    });
    const unknownVersion = await rpc('initialize', { protocolVersion: '1999-01-01' });
    expect(unknownVersion.body!.result.protocolVersion).toBe('2025-06-18');
  });

  it('ping answers an empty result with the same id (string ids too)', async () => {
    const r = await post({ jsonrpc: '2.0', id: 'p-1', method: 'ping' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 'p-1', result: {} });
  });

  it("tools/list names the four tools in the contract's order, each with a JSON Schema of its arguments", async () => {
    const { tools } = (await rpc('tools/list')).body!.result as { tools: { name: string; inputSchema: any; description: string }[] };
    expect(tools.map((tool) => tool.name)).toEqual(['invoke_agent', 'list_agents', 'get_run', 'get_usage']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(10);
    }
    const invoke = tools.find((tool) => tool.name === 'invoke_agent')!.inputSchema;
    expect(invoke.required).toEqual(['alias', 'message']);
    expect(invoke.properties.alias.enum).toEqual(['Prelude', 'Sonata', 'Symphony', 'Concerto']);
    // The contract's AgentSlug, as POST /v1/inference takes it.
    expect(invoke.properties.agentSlug).toMatchObject({ type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 });
    expect(invoke.additionalProperties).toBe(false);
    expect(tools.find((tool) => tool.name === 'get_run')!.inputSchema.required).toEqual(['runId']);
  });

  it('a notification (no id) answers 202 with no body', async () => {
    const res = await t.app.request('/v1/mcp/tenant/rpc', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await res.text()).toBe('');
  });
});

describe('tools', () => {
  it('list_agents answers what GET /v1/agents answers', async () => {
    const r = await callTool('list_agents');
    const result = r.body!.result;
    expect(result.isError).toBe(false);
    const agents = await getJson('/v1/agents');
    expect(result.structuredContent).toEqual(agents);
    expect(JSON.parse(result.content[0].text)).toEqual(agents);
    expect((agents as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });

  it('invoke_agent creates a run with source mcp and answers its redacted answer and id', async () => {
    const r = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'finance', message: 'What is our outstanding receivables total?' });
    const result = r.body!.result;
    expect(result.isError).toBe(false);
    const answer = result.content[0].text as string;
    expect(answer.length).toBeGreaterThan(0);
    const meta = JSON.parse(result.content[1].text);
    expect(meta).toMatchObject({ runId: expect.stringMatching(/^run_[A-Za-z0-9]{16,32}$/), agentSlug: 'finance', alias: 'Prelude' });
    expect(result.structuredContent).toMatchObject({ runId: meta.runId, content: answer });
    const { run } = (await getJson(`/v1/runs/${meta.runId}`)) as { run: Record<string, unknown> };
    expect(run).toMatchObject({ id: meta.runId, source: 'mcp', status: 'completed', agentSlug: 'finance', alias: 'Prelude', content: answer });
  });

  it('invoke_agent without agentSlug goes through the orchestrator', async () => {
    const r = await callTool('invoke_agent', { alias: 'Prelude', message: 'Draft a follow-up email to a customer about renewal.' });
    expect(r.body!.result.isError).toBe(false);
    const { run } = (await getJson(`/v1/runs/${r.body!.result.structuredContent.runId}`)) as { run: Record<string, unknown> };
    expect(run).toMatchObject({ agentSlug: 'orchestrator', source: 'mcp', status: 'completed' });
  });

  it('get_run answers a run of the workspace', async () => {
    const invoked = await callTool('invoke_agent', { alias: 'Sonata', agentSlug: 'hr', message: 'Onboarding plan for a new hire' });
    const runId = invoked.body!.result.structuredContent.runId as string;
    const r = await callTool('get_run', { runId });
    expect(r.body!.result.isError).toBe(false);
    expect(r.body!.result.structuredContent).toEqual(await getJson(`/v1/runs/${runId}`));
    expect(r.body!.result.structuredContent.run).toMatchObject({ id: runId, source: 'mcp', status: 'completed' });
  });

  it('get_usage answers what GET /v1/usage answers, and moves with MCP runs', async () => {
    const r = await callTool('get_usage');
    expect(r.body!.result.isError).toBe(false);
    const usage = (await getJson('/v1/usage')) as Record<string, unknown>;
    expect(r.body!.result.structuredContent).toEqual(usage);
    expect(JSON.stringify(usage)).not.toBe('{}');
  });
});

describe('errors', () => {
  it('an unknown method is -32601', async () => {
    const r = await rpc('resources/list');
    expect(r.body).toEqual({ jsonrpc: '2.0', id: r.body!.id, error: { code: -32601, message: 'Method not found: resources/list' } });
  });

  it('an unknown tool, a missing name and invalid arguments are -32602, naming the field and not the value', async () => {
    expect((await callTool('delete_everything')).body!.error).toEqual({ code: -32602, message: 'Unknown tool: delete_everything' });
    expect((await rpc('tools/call', {})).body!.error.code).toBe(-32602);
    const badAlias = await callTool('invoke_agent', { alias: 'Bogus-Alias', message: 'hi' });
    expect(badAlias.body!.error).toEqual({ code: -32602, message: 'Invalid arguments for invoke_agent: `alias` is invalid.' });
    expect(badAlias.text).not.toContain('Bogus-Alias');
    expect((await callTool('invoke_agent', { alias: 'Prelude' })).body!.error.message).toContain('`message`');
    expect((await callTool('invoke_agent', { alias: 'Prelude', message: 'hi', workspaceId: 'wksp_x' })).body!.error).toEqual({
      code: -32602,
      message: 'Invalid arguments for invoke_agent: `workspaceId` is invalid.',
    });
    expect((await callTool('get_run', { runId: 'nope' })).body!.error.code).toBe(-32602);
    expect((await callTool('get_usage', { extra: 1 })).body!.error.code).toBe(-32602);
  });

  it('a body that is not a JSON-RPC request is refused by the contract with 400 invalid_body', async () => {
    for (const body of [{ jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1 }, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'not json']) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body!.error).toBe('invalid_body');
    }
  });

  it('a sessionId outside the pattern is 400 invalid_request; one that names no stream is just answered', async () => {
    const bad = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { query: '?sessionId=abc' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
    const absent = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { query: '?sessionId=mcs_AAAAAAAAAAAAAAAA' });
    expect(absent.status).toBe(200);
    expect(absent.body).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('a refused run (manual kill switch) is a tool result with isError and a neutral message', async () => {
    await setManualKillSwitch(t.db, t.workspaceId, true, t.clock.now());
    try {
      const r = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'finance', message: 'Cash position?' });
      expect(r.body!.result.isError).toBe(true);
      expect(r.body!.result.structuredContent).toMatchObject({ error: 'kill_switch', kind: 'manual' });
      expect(r.body!.result.content[0].text).toMatch(/kill switch/i);
    } finally {
      await setManualKillSwitch(t.db, t.workspaceId, false, t.clock.now());
    }
    expect((await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'finance', message: 'Cash position?' })).body!.result.isError).toBe(false);
  });

  it('the tools act within the scopes of the key that issued the token', async () => {
    const bridgeOnly = await issueToken(await t.keyWith('mcp:tenant'));
    const refused = await callTool('invoke_agent', { alias: 'Prelude', message: 'hi' }, bridgeOnly);
    expect(refused.body!.result).toMatchObject({ isError: true, structuredContent: { error: 'scope_required' } });
    expect((await callTool('get_usage', undefined, bridgeOnly)).body!.result.structuredContent.error).toBe('scope_required');

    const salesOnly = await issueToken(await t.keyWith('mcp:tenant', 'orchestrator:invoke:agent:sales'));
    const elsewhere = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'finance', message: 'Close the books.' }, salesOnly);
    expect(elsewhere.body!.result.isError).toBe(true);
    expect(elsewhere.body!.result.structuredContent.error).toMatch(/^(agent_not_allowed|scope_required)$/);
    const own = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'sales', message: 'Draft a follow-up.' }, salesOnly);
    expect(own.body!.result.isError).toBe(false);
  });

  it('an unknown agent is a tool result with isError', async () => {
    const r = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'astrology', message: 'hi' });
    expect(r.body!.result.isError).toBe(true);
    expect(r.body!.result.structuredContent.error).toMatch(/^agent_/);
  });
});

describe('workspaces and credentials', () => {
  it("another workspace's run is not found", async () => {
    const mine = await callTool('invoke_agent', { alias: 'Prelude', agentSlug: 'legal', message: 'Review the NDA' });
    const runId = mine.body!.result.structuredContent.runId as string;
    const other = await createWorkspace(t.db, t.clock, 'Other');
    const otherKey = (await t.services.keys.create(other.id, { name: 'other', scopes: ['mcp:tenant', 'orchestrator:invoke'] })).secret;
    const otherToken = await issueToken(otherKey);
    const r = await callTool('get_run', { runId }, otherToken);
    expect(r.body!.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Run not found.' }], structuredContent: { error: 'not_found' } });
    expect(r.text).not.toContain('Review the NDA');
  });

  it('an API key instead of an MCP token is 401; no credential is 401 missing_bearer', async () => {
    const withKey = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { bearer: apiKey });
    expect(withKey.status).toBe(401);
    expect(withKey.body).toMatchObject({ error: 'not_authenticated' });
    const none = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { bearer: null });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: 'missing_bearer' });
    const stream = await t.app.request('/v1/mcp/tenant/sse', { headers: { authorization: `Bearer ${apiKey}` } });
    expect(stream.status).toBe(401);
    expect(await stream.json()).toMatchObject({ error: 'not_authenticated' });
  });

  it('no response of the bridge names a provider or a model', () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const body of seen) expect(body).not.toMatch(PROVIDER_NAMES);
  });

  // Last: it moves the clock past the token's hour.
  it('an expired MCP token is 401 not_authenticated', async () => {
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    t.clock.advance(3600_000 + 1000);
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'not_authenticated', message: 'Unknown or expired MCP token.' });
  });
});
