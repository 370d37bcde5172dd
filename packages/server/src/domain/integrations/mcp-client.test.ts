/**
 * The MCP client against real MCP servers on loopback (the official SDK, stateful: sessions named by
 * `Mcp-Session-Id`): an integration's session is opened once and kept for its later lists and calls, several at once;
 * a session the server forgot (`404`) or whose new connection failed before anything was sent is opened anew and the
 * request sent once more; a `tools/call` that failed after it was sent is never sent again; a session is closed
 * (`DELETE`) when its integration's URL or header changes, when it is forgotten or no longer offered, when it has gone
 * unused for the idle time, when more are kept than the bound, and at shutdown. Requests go over kept-alive
 * connections, and a connection the server closed while idle is replaced without a failed call.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type McpTestServer, startCrmServer, startMailServer } from '@service/testing/mcp-servers';
import { createMcpConnector, type McpConnector, type McpConnectorOptions, type McpEndpoint, McpFailure } from './mcp-client.ts';

describe('the MCP client', () => {
  let crm: McpTestServer;
  let connector: McpConnector;
  const connect = (more: Partial<McpConnectorOptions> = {}) =>
    (connector = createMcpConnector({ policy: { allowList: ['127.0.0.1'] }, ca: [crm.ca], ...more }));

  beforeEach(async () => {
    crm = await startCrmServer({ sessions: true });
    connect();
  });
  afterEach(async () => {
    await connector.close();
    await crm.close();
  });

  const endpoint = (integrationId = 'int_crm'): McpEndpoint => ({ url: crm.url, header: null, integrationId });
  const lookup = (query: string, at: McpEndpoint = endpoint()) => connector.callTool('ws_1', at, 'lookup_contact', { query });

  it('opens one session for an integration and keeps it: several lists and calls, some at once, one initialize', async () => {
    const tools = await connector.listTools('ws_1', endpoint());
    expect(tools.map((tool) => tool.name)).toContain('lookup_contact');
    for (const query of ['Northwind', 'Contoso']) expect(await lookup(query)).toMatchObject({ isError: false });
    const together = await Promise.all(['Fabrikam', 'Litware', 'Tailspin'].map((query) => lookup(query)));
    expect(together.every((result) => result.isError === false && result.text !== '')).toBe(true);
    await connector.listTools('ws_1', endpoint());

    expect(crm.initializes).toBe(1);
    expect(crm.openSessions).toBe(1);
    expect(crm.calls.map((call) => call.args.query)).toEqual(['Northwind', 'Contoso', 'Fabrikam', 'Litware', 'Tailspin']);
    // initialize, initialized, then the seven lists and calls: no standalone event stream, no session per call.
    expect(crm.requests).toHaveLength(9);
    const sessionIds = new Set(crm.requests.slice(1).map((headers) => headers['mcp-session-id']));
    expect(sessionIds.size).toBe(1);
    expect(crm.connections).toBeLessThanOrEqual(3);
  });

  it('opens the session anew when the server forgot it (404), and the list or call succeeds, performed once', async () => {
    await lookup('Northwind');
    crm.forgetSessions();
    expect(await lookup('Contoso')).toMatchObject({ isError: false });
    crm.forgetSessions();
    expect((await connector.listTools('ws_1', endpoint())).map((tool) => tool.name)).toEqual(['lookup_contact']);
    await lookup('Fabrikam');

    expect(crm.calls.map((call) => call.args.query)).toEqual(['Northwind', 'Contoso', 'Fabrikam']);
    // One session opened at first and one after each time the server forgot it; the last call reused the third.
    expect(crm.initializes).toBe(3);
  });

  it('opens the session anew when its new connection failed before anything was sent, and the call is performed once', async () => {
    await lookup('Northwind');
    crm.dropConnections();
    crm.refuseConnections(1);
    expect(await lookup('Contoso')).toMatchObject({ isError: false });
    expect(crm.calls.map((call) => call.args.query)).toEqual(['Northwind', 'Contoso']);
    expect(crm.initializes).toBe(2);
  });

  it('never sends a tools/call again once it may have reached the server: cut after it was performed, it fails, performed once', async () => {
    await lookup('Northwind');
    crm.mode = 'cut';
    const failed = await lookup('Contoso').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(McpFailure);
    expect(failed).toMatchObject({ kind: 'unreachable', message: 'The integration could not be reached.' });
    expect(crm.calls.map((call) => call.args.query)).toEqual(['Northwind', 'Contoso']);

    // The failed session is not used again: the next call opens another.
    crm.mode = 'ok';
    expect(await lookup('Fabrikam')).toMatchObject({ isError: false });
    expect(crm.calls.map((call) => call.args.query)).toEqual(['Northwind', 'Contoso', 'Fabrikam']);
    expect(crm.initializes).toBe(2);
  });

  it('closes the session when the integration’s URL or header changes, and never uses it again', async () => {
    const mail = await startMailServer({ sessions: true });
    try {
      await lookup('Northwind');
      expect(crm.openSessions).toBe(1);

      // The same integration, another header: the old session is ended (DELETE), a new one opened.
      const withHeader = { ...endpoint(), header: { name: 'X-Api-Key', value: 'key-2' } };
      await lookup('Contoso', withHeader);
      expect(crm.endedSessions).toBe(1);
      expect(crm.openSessions).toBe(1);
      expect(crm.initializes).toBe(2);
      expect(crm.calls.at(-1)?.headers['x-api-key']).toBe('key-2');

      // Another URL: the old server's session is ended and it sees no call again.
      const moved = { url: mail.url, header: null, integrationId: 'int_crm' };
      expect(await connector.callTool('ws_1', moved, 'send_email', { to: 'ada@example.com' }, undefined)).toMatchObject({ isError: false });
      expect(crm.endedSessions).toBe(2);
      expect(crm.openSessions).toBe(0);
      expect(crm.calls).toHaveLength(2);
      expect(mail.calls.map((call) => call.tool)).toEqual(['send_email']);
      expect(mail.initializes).toBe(1);
    } finally {
      await mail.close();
    }
  });

  it('closes a forgotten integration’s session (paused, removed) and one no longer offered; the next call opens another', async () => {
    await lookup('Northwind', endpoint('int_a'));
    await lookup('Contoso', endpoint('int_b'));
    expect(crm.openSessions).toBe(2);

    connector.forget('ws_1', 'int_a');
    await vi.waitFor(() => expect(crm.endedSessions).toBe(1));
    connector.retain('ws_1', new Set(['int_a']));
    await vi.waitFor(() => expect(crm.endedSessions).toBe(2));
    expect(crm.openSessions).toBe(0);

    await lookup('Fabrikam', endpoint('int_a'));
    expect(crm.initializes).toBe(3);
  });

  it('closes a session unused for the idle time', async () => {
    await connector.close();
    connect({ idleMs: 50 });
    await lookup('Northwind');
    await vi.waitFor(() => expect(crm.endedSessions).toBe(1));
    expect(crm.openSessions).toBe(0);
    await lookup('Contoso');
    expect(crm.initializes).toBe(2);
  });

  it('keeps at most the bound of sessions, closing the least recently used; closes all at shutdown', async () => {
    await connector.close();
    connect({ maxSessions: 2 });
    await lookup('Northwind', endpoint('int_a'));
    await lookup('Contoso', endpoint('int_b'));
    await lookup('Fabrikam', endpoint('int_a'));
    await lookup('Litware', endpoint('int_c'));
    // int_b was the least recently used.
    await vi.waitFor(() => expect(crm.endedSessions).toBe(1));
    await lookup('Tailspin', endpoint('int_a'));
    expect(crm.initializes).toBe(3);

    await connector.close();
    expect(crm.endedSessions).toBe(3);
    expect(crm.openSessions).toBe(0);
  });

  it('opens a new connection when the server closed the one it kept, and the call succeeds', async () => {
    await lookup('Northwind');
    const opened = crm.connections;
    crm.dropConnections();
    const result = await lookup('Contoso');
    expect(result).toMatchObject({ isError: false });
    expect(crm.calls.map((call) => call.args)).toEqual([{ query: 'Northwind' }, { query: 'Contoso' }]);
    expect(crm.connections).toBeGreaterThan(opened);
  });
});
