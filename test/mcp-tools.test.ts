/**
 * @module The tenant MCP bridge's tools are the contract's operations marked `x-mcp-tool`: what both transports
 * answer to `tools/list` (name, description, inputSchema) equals those operations, in document order, with each
 * arguments schema inlined; generated/mcp-tools.ts is what the generator makes of the bundle now, and carries each
 * operation's API key scopes; the generator refuses a marking it cannot serve.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools } from '../generated/mcp-tools.ts';
import { inlineSchema, mcpToolsOf } from '../scripts/generate-mcp-tools.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

type Json = any;
const bundle: Json = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'));

/** The marked operations, read from the bundle without the generator. */
const marked = Object.entries<Json>(bundle.paths).flatMap(([path, item]) =>
  Object.entries<Json>(item)
    .filter(([, operation]) => operation?.['x-mcp-tool'])
    .map(([method, operation]) => ({ path, method, operation, tool: operation['x-mcp-tool'] })),
);

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.request('/v1/mcp/tenant/tokens', { method: 'POST', headers: { authorization: `Bearer ${await t.keyWith('mcp:tenant')}` } });
  token = ((await res.json()) as { token: string }).token;
});
afterAll(async () => {
  await t.close();
});

/** `tools/list` over the SSE transport's RPC channel and over Streamable HTTP (initialize, then the list). */
async function servedLists(): Promise<{ sse: unknown; streamable: unknown }> {
  const post = (path: string, message: unknown, headers: Record<string, string> = {}) =>
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(message),
    });
  const sse = (await (await post('/v1/mcp/tenant/rpc', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json()) as Json;
  const initialized = await post('/v1/mcp/tenant', { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
  const session = initialized.headers.get('mcp-session-id')!;
  const streamable = (await (await post('/v1/mcp/tenant', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': session })).json()) as Json;
  return { sse: sse.result.tools, streamable: streamable.result.tools };
}

describe('the MCP tools are the operations marked x-mcp-tool', () => {
  it('both transports list exactly the marked operations, in document order, with the arguments schema inlined', async () => {
    expect(marked.map(({ operation }) => operation.operationId)).toEqual(['createInference', 'listAgents', 'getRunV1', 'getUsageV1']);
    const expected = marked.map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: inlineSchema(bundle, bundle.components.schemas[tool.arguments]),
    }));
    const { sse, streamable } = await servedLists();
    expect(sse).toEqual(expected);
    expect(streamable).toEqual(expected);
  });

  it("each inputSchema is its component's: the same fields and required ones, closed, and no reference left", () => {
    for (const { tool } of marked) {
      const component = bundle.components.schemas[tool.arguments];
      const served = mcpTools.find((entry) => entry.name === tool.name)!.inputSchema as Json;
      expect(served.type).toBe('object');
      expect(served.additionalProperties).toBe(false);
      expect(Object.keys(served.properties)).toEqual(Object.keys(component.properties));
      expect(served.required ?? []).toEqual(component.required ?? []);
      expect(JSON.stringify(served)).not.toContain('$ref');
    }
  });

  it("generated/mcp-tools.ts is the generator's reading of the bundle, with each operation's API key scopes", () => {
    const fresh = mcpToolsOf(bundle);
    expect(mcpTools.map(({ arguments: _zod, ...rest }) => rest)).toEqual(fresh.map(({ argumentsSchema: _name, ...rest }) => rest));
    for (const { path, method, operation, tool } of marked) {
      const entry = mcpTools.find((candidate) => candidate.name === tool.name)!;
      const apiKey = operation.security.filter((requirement: Json) => 'apiKey' in requirement).map((requirement: Json) => requirement.apiKey);
      expect({ path: entry.path, method: entry.method, scopes: entry.scopes, agentTargeted: entry.agentTargeted }).toEqual({
        path,
        method,
        scopes: apiKey,
        agentTargeted: operation['x-agent-targeted'] === true,
      });
    }
  });

  it('the generator refuses a marking it cannot serve', () => {
    const withTool = (tool: Json, security: Json = [{ apiKey: ['usage:read'] }]) => {
      const doc = structuredClone(bundle);
      doc.paths['/v1/usage'].get['x-mcp-tool'] = tool;
      doc.paths['/v1/usage'].get.security = security;
      return () => mcpToolsOf(doc);
    };
    const ok = { name: 'get_usage', description: 'Read the usage of the period.', arguments: 'McpNoArguments' };
    expect(withTool(ok)).not.toThrow();
    expect(withTool({ ...ok, name: 'Get-Usage' })).toThrow(/snake_case/);
    expect(withTool({ ...ok, name: 'invoke_agent' })).toThrow(/repeats the tool name invoke_agent/);
    expect(withTool({ ...ok, arguments: 'NoSuchSchema' })).toThrow(/must name a schema/);
    expect(withTool({ ...ok, arguments: 'ModelAlias' })).toThrow(/additionalProperties: false/);
    expect(withTool({ ...ok, extra: true })).toThrow(/unknown fields extra/);
    expect(withTool(ok, [{ adminSession: [] }])).toThrow(/not reachable with an API key/);
  });
});
