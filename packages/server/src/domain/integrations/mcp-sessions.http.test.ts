/**
 * The kept MCP sessions of connected integrations, end to end on both stores, against a stateful MCP server on loopback
 * (sessions named by `Mcp-Session-Id`): the check before an integration is recorded opens a session of its own and
 * ends it; the agent loop's calls and the checks after reuse one session; pausing and removing the integration end its
 * session (`DELETE`), and so does a pause the tool source learns of from the store (made elsewhere); a resumed or
 * reconnected integration opens a new session; the app's close ends those left.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { startCrmServer, startMailServer, type McpTestServer } from '@service/testing/mcp-servers';
import { testBackends, type TestStore } from '@service/testing/store';
import { setPaused } from './records.ts';

describe.each(testBackends())('kept MCP sessions on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let crm: McpTestServer;
  let mail: McpTestServer;
  let admin: { cookie: string; csrfToken: string };

  beforeEach(async () => {
    store = await open();
    crm = await startCrmServer({ sessions: true });
    mail = await startMailServer({ sessions: true });
    t = await createTestApp({
      db: store.db,
      deps: { webhooks: { allowList: ['127.0.0.1'] }, integrations: { ca: [crm.ca, mail.ca], toolsTtlMs: 3_600_000 } },
    });
    admin = await t.login();
  });
  afterEach(async () => {
    await t?.close();
    await Promise.all([crm?.close(), mail?.close()]);
    await store?.cleanup();
  });

  async function call(method: string, path: string, body?: unknown) {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
  }

  /** The offered tool `name`, called by the agent loop's tool source. */
  async function callTool(name: string, args: Record<string, unknown>) {
    const tool = (await t.services.integrationTools.toolsOf(t.workspaceId)).find((offered) => offered.definition.name === name);
    if (!tool) return undefined;
    return tool.call(args, { signal: new AbortController().signal });
  }

  it('reuses one session for the calls and checks; pausing ends it, resuming opens another, removing ends that', async () => {
    const connected = await call('POST', '/integrations', { integration: 'crm', url: crm.url });
    expect(connected.status).toBe(201);
    const id = String(connected.body!.id);
    // The check before the integration was recorded: a session of its own, ended.
    expect(crm.initializes).toBe(1);
    await vi.waitFor(() => expect(crm.endedSessions).toBe(1));

    for (const email of ['ada@example.com', 'grace@example.com']) {
      expect(await callTool('crm.lookup_contact', { email })).toMatchObject({ ok: true });
    }
    expect((await call('POST', `/integrations/${id}/test`)).body).toMatchObject({ status: 'active', lastCheck: { ok: true } });
    expect(crm.initializes).toBe(2);
    expect(crm.openSessions).toBe(1);

    const paused = await call('POST', `/integrations/${id}/pause`);
    expect(paused).toMatchObject({ status: 200, body: { status: 'paused' } });
    await vi.waitFor(() => expect(crm.openSessions).toBe(0));
    expect(crm.endedSessions).toBe(2);
    expect(await callTool('crm.lookup_contact', { email: 'ada@example.com' })).toBeUndefined();

    expect((await call('POST', `/integrations/${id}/resume`)).body).toMatchObject({ status: 'active' });
    expect(await callTool('crm.lookup_contact', { email: 'ada@example.com' })).toMatchObject({ ok: true });
    expect(crm.initializes).toBe(3);
    expect(crm.openSessions).toBe(1);

    expect((await call('DELETE', `/integrations/${id}`)).status).toBe(204);
    await vi.waitFor(() => expect(crm.openSessions).toBe(0));
    expect(crm.endedSessions).toBe(3);
    expect(crm.calls).toHaveLength(3);
  });

  it('ends the session of an integration paused elsewhere once the tool source reads it from the store', async () => {
    const connected = await call('POST', '/integrations', { integration: 'crm', url: crm.url });
    const id = String(connected.body!.id);
    expect(await callTool('crm.lookup_contact', { email: 'ada@example.com' })).toMatchObject({ ok: true });
    expect(crm.openSessions).toBe(1);

    // Another instance's pause: the row changes and the change is notified, not through this process's service.
    await store.db.transaction((tx) => setPaused(tx, t.workspaceId, id, true));
    expect(await callTool('crm.lookup_contact', { email: 'ada@example.com' })).toBeUndefined();
    await vi.waitFor(() => expect(crm.openSessions).toBe(0));
    expect(crm.calls).toHaveLength(1);
  });

  it('never reuses a removed integration’s session for one reconnected under its name, and ends the sessions left at close', async () => {
    const first = await call('POST', '/integrations', { integration: 'crm', url: crm.url });
    expect(await callTool('crm.lookup_contact', { email: 'ada@example.com' })).toMatchObject({ ok: true });
    expect((await call('DELETE', `/integrations/${String(first.body!.id)}`)).status).toBe(204);
    await vi.waitFor(() => expect(crm.openSessions).toBe(0));

    // Reconnected under the same name, on another server: its calls go there, in a session of their own.
    expect((await call('POST', '/integrations', { integration: 'crm', url: mail.url })).status).toBe(201);
    expect(await callTool('crm.send_email', { to: 'ada@example.com' })).toEqual({ ok: true, content: 'Sent to ada@example.com' });
    expect(crm.calls).toHaveLength(1);
    expect(mail.calls.map((sent) => sent.tool)).toEqual(['send_email']);
    expect(mail.openSessions).toBe(1);

    await t.close();
    expect(mail.openSessions).toBe(0);
  });
});
