/**
 * The dispatcher on its own (the app's services on PGlite): malformed messages are -32600 with the
 * id when it is usable, notifications answer nothing, and every response is redacted. Over HTTP the
 * contract's body schema refuses most malformed messages first (400 invalid_body, see
 * routes/mcp.test.ts); the dispatcher still checks, since it is the protocol's boundary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { createMcpSessions } from './sessions.ts';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const dispatch = (message: unknown) =>
  t.services.mcp.dispatcher.dispatch({ workspaceId: t.workspaceId, keyScopes: ['orchestrator:invoke', 'departments:read', 'usage:read'] }, message);

describe('MCP dispatcher', () => {
  it.each([
    ['not an object', 'ping', null],
    ['an array (batch)', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], null],
    ['another JSON-RPC version', { jsonrpc: '1.0', id: 3, method: 'ping' }, 3],
    ['no method', { jsonrpc: '2.0', id: 'a' }, 'a'],
    ['an empty method', { jsonrpc: '2.0', id: 4, method: '' }, 4],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
    ['params that are not an object', { jsonrpc: '2.0', id: 5, method: 'ping', params: [1] }, 5],
  ])('%s is -32600 Invalid Request', async (_name, message, id) => {
    expect(await dispatch(message)).toEqual({ jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid Request' } });
  });

  it('a notification answers nothing, whatever its method', async () => {
    expect(await dispatch({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeNull();
    expect(await dispatch({ jsonrpc: '2.0', method: 'no/such/method' })).toBeNull();
  });

  it('a method name is echoed in -32601 only through the redactor', async () => {
    const response = await dispatch({ jsonrpc: '2.0', id: 1, method: 'OpenAI/gpt-4o' });
    expect(response).toMatchObject({ id: 1, error: { code: -32601 } });
    expect(JSON.stringify(response)).not.toMatch(/openai|gpt-4o/i);
  });
});

describe('MCP sessions', () => {
  it('ids are mcs_ + 16 base62, found only from their workspace, and gone once closed', async () => {
    const sessions = createMcpSessions();
    const session = sessions.open('wksp_A', async () => {});
    expect(session.id).toMatch(/^mcs_[A-Za-z0-9]{16}$/);
    expect(sessions.find(session.id, 'wksp_A')).toBe(session);
    expect(sessions.find(session.id, 'wksp_B')).toBeUndefined();
    expect(sessions.size).toBe(1);
    sessions.close(session.id);
    expect(sessions.find(session.id, 'wksp_A')).toBeUndefined();
    expect(sessions.size).toBe(0);
  });
});
