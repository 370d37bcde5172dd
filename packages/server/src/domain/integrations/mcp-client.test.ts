/**
 * The MCP client over kept-alive connections (mcp-client.ts, pinned-fetch.ts): a session's requests and the next
 * sessions reuse a TLS connection to the server instead of opening one per request (a session's standalone event
 * stream, which its close cuts, still takes one of its own), and a connection the server closed while idle is
 * replaced without a failed call.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type McpTestServer, startCrmServer } from '@service/testing/mcp-servers';
import { createMcpConnector, type McpConnector } from './mcp-client.ts';

describe('the MCP client', () => {
  let crm: McpTestServer;
  let connector: McpConnector;

  beforeEach(async () => {
    crm = await startCrmServer();
    connector = createMcpConnector({ policy: { allowList: ['127.0.0.1'] }, ca: [crm.ca] });
  });
  afterEach(async () => {
    await crm.close();
  });

  const endpoint = () => ({ url: crm.url, header: null });

  it('lists and calls over kept-alive connections: at most one new connection a session, not one a request', async () => {
    const tools = await connector.listTools('ws_1', endpoint());
    expect(tools.map((tool) => tool.name)).toContain('lookup_contact');
    for (const query of ['Northwind', 'Contoso', 'Fabrikam']) {
      const result = await connector.callTool('ws_1', endpoint(), 'lookup_contact', { query });
      expect(result.isError).toBe(false);
      expect(result.text).not.toBe('');
    }
    expect(crm.calls.map((call) => call.args)).toEqual([{ query: 'Northwind' }, { query: 'Contoso' }, { query: 'Fabrikam' }]);
    // Four sessions of four requests each (initialize, initialized, the event stream, the call): one connection
    // carries the requests of all of them, and each session's event stream takes one (16 connections before).
    expect(crm.requests).toHaveLength(16);
    expect(crm.connections).toBeLessThanOrEqual(5);
  });

  it('opens a new connection when the server closed the one it kept, and the call succeeds', async () => {
    await connector.callTool('ws_1', endpoint(), 'lookup_contact', { query: 'Northwind' });
    const opened = crm.connections;
    crm.dropConnections();
    const result = await connector.callTool('ws_1', endpoint(), 'lookup_contact', { query: 'Contoso' });
    expect(result).toMatchObject({ isError: false });
    expect(crm.calls.map((call) => call.args)).toEqual([{ query: 'Northwind' }, { query: 'Contoso' }]);
    expect(crm.connections).toBeGreaterThan(opened);
  });
});
