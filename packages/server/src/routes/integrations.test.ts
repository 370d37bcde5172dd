/**
 * Connected integrations over real MCP servers on loopback (the official SDK, Streamable HTTP over HTTPS), on both
 * stores: connecting runs the connection check first (a server that passes is recorded with its tools and emits
 * `integration.connected`; one that fails records nothing and answers `400 invalid_body` in general words), the SSRF
 * guard of webhook destinations, the auth header sealed (never in an answer, never in clear in the store), list,
 * read, check, pause, resume, remove, another workspace's `404`, and the tools the agent loop gets: names, read-only
 * flags, calls that succeed, that the tool reports failed, and that a slow, failing or lying server turns into
 * `ok: false` without naming a host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as zod from '../../../../generated/zod.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { until } from '@service/testing/cli-processes';
import { INTERNAL_HOST_IN_ERRORS, startCrmServer, startMailServer, type McpTestServer } from '@service/testing/mcp-servers';
import { testBackends, type TestStore } from '@service/testing/store';
import { subscribeToEveryEvent } from '@service/testing/event-subscriber';

const CRM_TOKEN = 'Bearer crm-secret-token-5f2a9c';

describe.each(testBackends())('integrations on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let other: TestApp;
  let admin: { cookie: string; csrfToken: string };
  let otherAdmin: { cookie: string; csrfToken: string };
  let crm: McpTestServer;
  let mail: McpTestServer;
  let flaky: McpTestServer;

  beforeAll(async () => {
    store = await open();
    crm = await startCrmServer({ requiredHeader: { name: 'Authorization', value: CRM_TOKEN } });
    mail = await startMailServer();
    flaky = await startCrmServer({ slowMs: 3_000 });
    const deps = {
      webhooks: { allowList: ['127.0.0.1'] },
      integrations: { ca: [crm.ca, mail.ca, flaky.ca], connectTimeoutMs: 1_000, callTimeoutMs: 1_000, toolsTtlMs: 3_600_000 },
    };
    t = await createTestApp({ db: store.db, deps });
    other = await createTestApp({ db: store.db, deps });
    await subscribeToEveryEvent(t.db, t.workspaceId);
    admin = await t.login();
    otherAdmin = await other.login();
  });
  afterAll(async () => {
    await Promise.all([crm?.close(), mail?.close(), flaky?.close()]);
    await t?.close();
    await other?.close();
    await store?.cleanup();
  });

  async function call(method: string, path: string, body?: unknown, as: { app: TestApp; session: typeof admin } = { app: t, session: admin }) {
    const res = await as.app.app.request(path, {
      method,
      headers: { cookie: as.session.cookie, 'x-csrf-token': as.session.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: text === '' ? undefined : (JSON.parse(text) as any) };
  }
  const count = async (sql: string, params: unknown[]) => (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;

  let crmId: string;
  let mailId: string;
  const adminUserId = async () => (await store.db.query<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [t.admin.email]))[0]!.id;

  it('connects a server that passes the check: recorded with its tools, integration.connected emitted, the header sealed', async () => {
    const res = await call('POST', '/integrations', { integration: 'crm', url: crm.url, authHeader: { name: 'Authorization', value: CRM_TOKEN } });
    expect(res.status, res.text).toBe(201);
    const userId = await adminUserId();
    const integration = zod.zIntegration.parse(res.body);
    expect(integration).toMatchObject({
      integration: 'crm',
      provider: 'mcp',
      url: crm.url,
      authHeaderName: 'Authorization',
      status: 'active',
      connectedBy: userId,
      tools: [{ name: 'crm.lookup_contact', description: 'Find a contact by email.', readOnly: true }],
      lastCheck: { ok: true, error: null },
    });
    expect(res.text).not.toContain('crm-secret-token');
    crmId = integration.id;
    // The server saw the header on every request.
    expect(crm.requests.length).toBeGreaterThan(0);
    expect(crm.requests.every((headers) => headers.authorization === CRM_TOKEN)).toBe(true);

    const [row] = await store.db.query<{ auth_header_encrypted: string }>(`SELECT auth_header_encrypted FROM integrations WHERE id = $1`, [crmId]);
    expect(row!.auth_header_encrypted).toMatch(/^v1\./);
    expect(row!.auth_header_encrypted).not.toContain('crm-secret-token');
    expect(t.services.webhooks.secretBox.open(row!.auth_header_encrypted)).toBe(CRM_TOKEN);

    const events = await store.db.query<{ data: unknown }>(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND type = 'integration.connected'`, [
      t.workspaceId,
    ]);
    expect(events.map((e) => e.data)).toEqual([{ integration: 'crm', provider: 'mcp', connected_by: userId }]);
    expect(await count(`audit_events WHERE workspace_id = $1 AND action = 'integration.connected' AND target_id = $2`, [t.workspaceId, crmId])).toBe(1);

    const mailRes = await call('POST', '/integrations', { integration: 'mail', provider: 'smtp-relay', url: mail.url });
    expect(mailRes.status, mailRes.text).toBe(201);
    mailId = mailRes.body.id;
    expect(mailRes.body.tools).toEqual([
      { name: 'mail.send_email', description: 'Send an email.', readOnly: false },
      { name: 'mail.draft_reply', description: 'Draft a reply.', readOnly: false },
    ]);
    expect(mailRes.body.authHeaderName).toBeNull();
  });

  it('records nothing when the check fails: a refused credential, a failing server, one that is not MCP, a name already taken', async () => {
    const before = await count(`integrations WHERE workspace_id = $1`, [t.workspaceId]);
    const eventsBefore = await count(`outbox_events WHERE tenant_id = $1`, [t.workspaceId]);

    const wrongHeader = await call('POST', '/integrations', {
      integration: 'crm2',
      url: crm.url,
      authHeader: { name: 'Authorization', value: 'Bearer wrong' },
    });
    expect(wrongHeader.status).toBe(400);
    expect(wrongHeader.body).toMatchObject({ error: 'invalid_body', message: 'The connection check failed: The integration refused the credentials.' });

    flaky.mode = 'fail';
    const failing = await call('POST', '/integrations', { integration: 'flaky', url: flaky.url });
    expect(failing.status).toBe(400);
    expect(failing.body).toMatchObject({ error: 'invalid_body', message: expect.stringMatching(/^The connection check failed: /) });
    expect(failing.text).not.toContain(INTERNAL_HOST_IN_ERRORS);
    expect(failing.text).not.toContain('ECONNREFUSED');

    flaky.mode = 'malformed';
    const lying = await call('POST', '/integrations', { integration: 'flaky', url: flaky.url });
    expect(lying.status).toBe(400);
    expect(lying.body.message).toBe('The connection check failed: The integration did not answer as an MCP server.');

    flaky.mode = 'slow';
    const slow = await call('POST', '/integrations', { integration: 'flaky', url: flaky.url });
    expect(slow.status).toBe(400);
    expect(slow.body.message).toBe('The connection check failed: The integration did not answer in time.');
    flaky.mode = 'ok';

    const taken = await call('POST', '/integrations', { integration: 'crm', url: mail.url });
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ error: 'invalid_body', message: 'An integration named crm is already connected.' });

    const reserved = await call('POST', '/integrations', { integration: 'x', url: mail.url, authHeader: { name: 'Host', value: 'evil' } });
    expect(reserved.status).toBe(400);

    expect(await count(`integrations WHERE workspace_id = $1`, [t.workspaceId])).toBe(before);
    expect(await count(`outbox_events WHERE tenant_id = $1`, [t.workspaceId])).toBe(eventsBefore);
  });

  it('refuses what the SSRF guard of webhook destinations refuses, before any connection', async () => {
    for (const url of ['https://10.1.2.3/mcp', 'https://169.254.169.254/latest', 'https://192.168.0.10:8443/mcp', 'https://user:pw@mcp.example.com/mcp']) {
      const res = await call('POST', '/integrations', { integration: 'ssrf', url });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    }
    const plain = await call('POST', '/integrations', { integration: 'ssrf', url: mail.url.replace('https:', 'http:') });
    expect(plain.status).toBe(400);
    const missingUrl = await call('POST', '/integrations', { integration: 'crm', provider: 'hubspot' });
    expect(missingUrl.status).toBe(400);
    expect(await count(`integrations WHERE workspace_id = $1 AND integration = 'ssrf'`, [t.workspaceId])).toBe(0);
  });

  it('lists and reads, checks again, pauses, resumes and removes, each change audited; never the header value', async () => {
    const list = await call('GET', '/integrations');
    expect(list.status).toBe(200);
    const parsed = zod.zIntegrationList.parse(list.body);
    expect(parsed.data.map((i) => i.integration).sort()).toEqual(['crm', 'mail']);
    expect(list.text).not.toContain('crm-secret-token');

    const one = await call('GET', `/integrations/${crmId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(parsed.data.find((i) => i.id === crmId));

    flaky.mode = 'ok';
    // The mail server failing: the check answers 200 with the failure, and the integration is failing.
    await mail.close();
    const failed = await call('POST', `/integrations/${mailId}/test`);
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failing', lastCheck: { ok: false, error: 'The integration could not be reached.' } });
    expect(failed.text).not.toContain('ECONNREFUSED');

    const checked = await call('POST', `/integrations/${crmId}/test`);
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({ status: 'active', lastCheck: { ok: true, error: null } });

    const paused = await call('POST', `/integrations/${crmId}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
    const stillPaused = await call('POST', `/integrations/${crmId}/test`);
    expect(stillPaused.body.status).toBe('paused');
    const resumed = await call('POST', `/integrations/${crmId}/resume`);
    expect(resumed.body.status).toBe('active');

    const removed = await call('DELETE', `/integrations/${mailId}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await call('GET', `/integrations/${mailId}`)).status).toBe(404);
    expect(await count(`integrations WHERE id = $1`, [mailId])).toBe(0);

    const actions = await store.db.query<{ action: string }>(
      `SELECT action FROM audit_events WHERE workspace_id = $1 AND target_type = 'integration' ORDER BY created_at, action`,
      [t.workspaceId],
    );
    expect(new Set(actions.map((a) => a.action))).toEqual(
      new Set(['integration.connected', 'integration.tested', 'integration.paused', 'integration.resumed', 'integration.removed']),
    );
  });

  it("answers 404 for another workspace's integration, and lists only its own", async () => {
    const as = { app: other, session: otherAdmin };
    expect((await call('GET', `/integrations/${crmId}`, undefined, as)).status).toBe(404);
    expect((await call('POST', `/integrations/${crmId}/test`, undefined, as)).status).toBe(404);
    expect((await call('POST', `/integrations/${crmId}/pause`, undefined, as)).status).toBe(404);
    expect((await call('POST', `/integrations/${crmId}/resume`, undefined, as)).status).toBe(404);
    expect((await call('DELETE', `/integrations/${crmId}`, undefined, as)).status).toBe(404);
    expect((await call('GET', '/integrations', undefined, as)).body).toEqual({ data: [] });
    expect(await other.services.integrationTools.toolsOf(other.workspaceId)).toEqual([]);
    expect((await call('GET', `/integrations/${crmId}`)).body.status).toBe('active');
  });

  it('gives the agent loop the active integrations’ tools, calls them over MCP, and turns every server failure into ok: false', async () => {
    const mailAgain = await startMailServer();
    // A fresh app trusting the new server's certificate, on the same store and workspace.
    const app = await createTestApp({
      db: store.db,
      deps: { webhooks: { allowList: ['127.0.0.1'] }, integrations: { ca: [crm.ca, mailAgain.ca, flaky.ca], connectTimeoutMs: 1_000, callTimeoutMs: 1_000 } },
    });
    try {
      const session = await app.login();
      const as = { app, session };
      expect((await call('POST', '/integrations', { integration: 'mail', url: mailAgain.url }, as)).status).toBe(201);
      expect((await call('POST', '/integrations', { integration: 'flaky', url: flaky.url }, as)).status).toBe(201);

      const tools = await app.services.integrationTools.toolsOf(app.workspaceId);
      expect(tools.map((tool) => [tool.definition.name, tool.readOnly]).sort()).toEqual([
        ['flaky.lookup_contact', true],
        ['mail.draft_reply', false],
        ['mail.send_email', false],
      ]);
      const send = tools.find((tool) => tool.definition.name === 'mail.send_email')!;
      expect(send.definition.inputSchema).toMatchObject({ type: 'object', required: ['to'] });
      // The same definition objects while the tools list stands: a model input's count of each is kept by the object.
      // (On PostgreSQL the two connections' change notifications may still be arriving, each dropping the cache once:
      // wait until two reads agree, which never happens if every read makes new objects.)
      let stood = tools;
      await until(
        async () => {
          const next = await app.services.integrationTools.toolsOf(app.workspaceId);
          const same = next.length === stood.length && next.every((tool, i) => tool.definition === stood[i]!.definition);
          stood = next;
          return same;
        },
        'the tools list to stand',
        10_000,
        100,
      );
      const again = await app.services.integrationTools.toolsOf(app.workspaceId);
      expect(again.map((tool) => tool.definition.name)).toEqual(stood.map((tool) => tool.definition.name));
      for (const [i, tool] of again.entries()) expect(tool.definition).toBe(stood[i]!.definition);
      const signal = new AbortController().signal;
      expect(await send.call({ to: 'ada@example.com', subject: 'Hi' }, { signal })).toEqual({ ok: true, content: 'Sent to ada@example.com' });
      expect(mailAgain.calls).toEqual([{ tool: 'send_email', args: { to: 'ada@example.com', subject: 'Hi' }, headers: expect.any(Object) }]);
      // The sanitized name reaches the server's own tool.
      const draft = tools.find((tool) => tool.definition.name === 'mail.draft_reply')!;
      expect(await draft.call({}, { signal })).toEqual({ ok: true, content: 'Drafted.' });
      expect(mailAgain.calls.map((c) => c.tool)).toEqual(['send_email', 'Draft Reply']);

      const lookup = tools.find((tool) => tool.definition.name === 'flaky.lookup_contact')!;
      expect(await lookup.call({ email: 'ada@example.com' }, { signal })).toEqual({
        ok: true,
        content: 'Contact: Ada Lovelace <ada@example.com>\nPlan: enterprise',
      });
      expect(await lookup.call({ email: 'missing@example.com' }, { signal })).toEqual({
        ok: false,
        error: 'The tool reported an error. No contact with that email.',
      });

      for (const [mode, error] of [
        ['slow', 'The integration did not answer in time.'],
        ['fail', 'The integration did not answer as an MCP server.'],
        ['malformed', 'The integration did not answer as an MCP server.'],
      ] as const) {
        flaky.mode = mode;
        const outcome = await lookup.call({ email: 'ada@example.com' }, { signal });
        expect(outcome, mode).toEqual({ ok: false, error });
        expect(JSON.stringify(outcome)).not.toMatch(/127\.0\.0\.1|corp\.internal|ECONN/);
      }
      flaky.mode = 'ok';

      // A paused integration's tools are not offered; resumed, they are again.
      const flakyId = (await call('GET', '/integrations', undefined, as)).body.data.find((i: { integration: string }) => i.integration === 'flaky').id;
      await call('POST', `/integrations/${flakyId}/pause`, undefined, as);
      expect((await app.services.integrationTools.toolsOf(app.workspaceId)).map((tool) => tool.definition.name).sort()).toEqual([
        'mail.draft_reply',
        'mail.send_email',
      ]);
      await call('POST', `/integrations/${flakyId}/resume`, undefined, as);
      expect((await app.services.integrationTools.toolsOf(app.workspaceId)).map((tool) => tool.definition.name)).toContain('flaky.lookup_contact');
    } finally {
      await mailAgain.close();
      await app.close();
    }
  });
});
