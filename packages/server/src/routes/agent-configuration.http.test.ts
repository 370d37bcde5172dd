/**
 * An agent's configuration over real HTTP (the app on a loopback port): any member reads the defaults
 * (the department's instructions, 8 steps, every tool, no policy), an admin replaces it and reads it
 * back, the audit log records the change, the agent loop's reader (`services.agentDefinitions`) sees
 * it, bad fields answer `400 invalid_body`, an unknown slug `404 agent_not_found`, a member `403`,
 * and another workspace keeps its own.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zAgentConfiguration, zAuditEventList } from '../../../../generated/zod.ts';
import { defaultInstructions } from '../domain/agents/instructions.ts';
import { AGENT_SLUGS } from '../vocabulary/catalog.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { httpCaller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())("an agent's configuration on $name", ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let server: ServerType;
  let admin: Session;
  let member: Session;
  let call: ReturnType<typeof httpCaller>;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    call = httpCaller(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    admin = await t.login();
    member = await memberSession(t, admin);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await t?.close();
    await store?.cleanup();
  });

  const valid = {
    instructions: 'You are the Sales agent. Qualify leads only.',
    stepLimit: 5,
    tools: ['crm', 'email.draft'],
    approvals: { 'crm.update': 'required' },
  };

  it('any member reads the defaults of every agent: its own instructions, 8 steps, every tool, no policy', async () => {
    const seen = new Set<string>();
    for (const slug of AGENT_SLUGS) {
      const res = await call(member, 'GET', `/agents/${slug}/configuration`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      const configuration = zAgentConfiguration.parse(res.body);
      expect(configuration).toEqual({
        slug,
        instructions: defaultInstructions(slug),
        customInstructions: false,
        defaultInstructions: defaultInstructions(slug),
        stepLimit: 8,
        tools: null,
        approvals: {},
        updatedAt: null,
      });
      expect(configuration.instructions).toMatch(/draft/);
      seen.add(configuration.instructions);
      expect(await t.services.agentDefinitions.get(t.workspaceId, slug)).toEqual({
        slug,
        instructions: defaultInstructions(slug),
        stepLimit: 8,
        tools: null,
        approvals: {},
      });
    }
    expect(seen.size).toBe(AGENT_SLUGS.length);
  });

  it('an admin replaces it: the answer, a read-back, the agent loop reader and the audit log all have it', async () => {
    expect((await t.services.agentDefinitions.get(t.workspaceId, 'sales')).stepLimit).toBe(8); // cached before the change
    const res = await call(admin, 'PUT', '/agents/sales/configuration', valid);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected = {
      slug: 'sales',
      ...valid,
      customInstructions: true,
      defaultInstructions: defaultInstructions('sales'),
      updatedAt: t.clock.now().toISOString(),
    };
    expect(zAgentConfiguration.parse(res.body)).toEqual(expected);
    expect((await call(member, 'GET', '/agents/sales/configuration')).body).toEqual(expected);
    expect(await t.services.agentDefinitions.get(t.workspaceId, 'sales')).toEqual({ slug: 'sales', ...valid });

    const audit = zAuditEventList.parse((await call(admin, 'GET', '/audit-events?action=agent.configured')).body);
    expect(audit.data[0]).toMatchObject({
      action: 'agent.configured',
      actor: { type: 'user' },
      target: { type: 'agent', id: 'sales', label: 'Sales' },
      details: { changed: ['instructions', 'stepLimit', 'tools', 'approvals'], customInstructions: true, stepLimit: 5, tools: 2, approvals: 1 },
    });
    // The instructions' text is not copied into the log.
    expect(JSON.stringify(audit.data[0])).not.toContain('Qualify leads');

    // Back to the department's default instructions and every tool (a second later: the log's order is its time).
    t.clock.advance(1_000);
    const reset = await call(admin, 'PUT', '/agents/sales/configuration', { instructions: null, stepLimit: 8, tools: null, approvals: {} });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ instructions: defaultInstructions('sales'), customInstructions: false, tools: null, approvals: {} });
    expect((await t.services.agentDefinitions.get(t.workspaceId, 'sales')).instructions).toBe(defaultInstructions('sales'));
    const again = zAuditEventList.parse((await call(admin, 'GET', '/audit-events?action=agent.configured')).body);
    expect(again.data[0]?.details).toMatchObject({ changed: ['instructions', 'stepLimit', 'tools', 'approvals'], customInstructions: false, tools: 'all' });
  });

  it('instructions of exactly 20,000 characters are accepted', async () => {
    const res = await call(admin, 'PUT', '/agents/legal/configuration', { ...valid, instructions: 'x'.repeat(20_000) });
    expect(res.status).toBe(200);
    expect(res.body.instructions).toHaveLength(20_000);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['a step limit of 0', { ...valid, stepLimit: 0 }, 'stepLimit'],
    ['a step limit of 33', { ...valid, stepLimit: 33 }, 'stepLimit'],
    ['a fractional step limit', { ...valid, stepLimit: 2.5 }, 'stepLimit'],
    ['empty instructions', { ...valid, instructions: '' }, 'instructions'],
    ['blank instructions', { ...valid, instructions: '   ' }, 'instructions'],
    ['instructions over 20,000 characters', { ...valid, instructions: 'x'.repeat(20_001) }, 'instructions'],
    ['a tool name in capitals', { ...valid, tools: ['CRM'] }, 'tools'],
    ['a tool name of three parts', { ...valid, tools: ['crm.update.all'] }, 'tools'],
    ['a tool named twice', { ...valid, tools: ['crm', 'crm'] }, 'tools'],
    ['a policy on a whole integration', { ...valid, approvals: { crm: 'required' } }, 'approvals'],
    ['a policy of another value', { ...valid, approvals: { 'crm.update': 'sometimes' } }, 'approvals'],
    ['no step limit', { instructions: null, tools: null, approvals: {} }, 'stepLimit'],
    ['an unknown field', { ...valid, model: 'gpt' }, 'model'],
  ];
  it.each(invalid)('%s answers 400 invalid_body naming the field, and changes nothing', async (_name, body, field) => {
    const before = (await call(admin, 'GET', '/agents/finance/configuration')).body;
    const res = await call(admin, 'PUT', '/agents/finance/configuration', body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.error).toBe('invalid_body');
    expect(res.body.message).toContain(field);
    expect((await call(admin, 'GET', '/agents/finance/configuration')).body).toEqual(before);
  });

  it('an unknown agent answers 404 agent_not_found, to a read and to a change', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', valid],
    ] as const) {
      const res = await call(admin, method, '/agents/travel/configuration', body);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'agent_not_found' });
    }
    await expect(t.services.agentDefinitions.get(t.workspaceId, 'travel')).rejects.toMatchObject({ code: 'agent_not_found' });
  });

  it('a member cannot change it, nor a write without the CSRF token, nor anyone without a session', async () => {
    const byMember = await call(member, 'PUT', '/agents/hr/configuration', valid);
    expect(byMember.status).toBe(403);
    expect(byMember.body.error).toBe('role_forbidden');
    const noCsrf = await call({ ...admin, csrfToken: 'wrong' }, 'PUT', '/agents/hr/configuration', valid);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toBe('forbidden');
    const anonymous = await call(undefined, 'GET', '/agents/hr/configuration');
    expect(anonymous.status).toBe(401);
    const withKey = await call(undefined, 'GET', '/agents/hr/configuration', undefined, { authorization: `Bearer ${t.apiKey}` });
    expect(withKey.status).toBe(401);
    expect((await call(admin, 'GET', '/agents/hr/configuration')).body).toMatchObject({ customInstructions: false, updatedAt: null });
  });

  it("another workspace's agent keeps its own configuration", async () => {
    const other = await createTestApp({ db: store.db });
    try {
      expect((await call(admin, 'PUT', '/agents/it/configuration', { ...valid, stepLimit: 2 })).status).toBe(200);
      const otherAdmin = await other.login();
      const res = await call(otherAdmin, 'GET', '/agents/it/configuration');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ stepLimit: 8, customInstructions: false, updatedAt: null });
      expect((await t.services.agentDefinitions.get(other.workspaceId, 'it')).stepLimit).toBe(8);
      expect((await t.services.agentDefinitions.get(t.workspaceId, 'it')).stepLimit).toBe(2);
    } finally {
      await other.close();
    }
  });
});
