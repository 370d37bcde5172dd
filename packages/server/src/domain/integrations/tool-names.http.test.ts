/**
 * Tools named as real MCP servers name them (`send-email`, `getContact`, `search.v2`, `360-view`), of an integration
 * whose own name has a dash (`help-desk`), end to end on both stores: the integration lists them under names of the
 * contract's pattern; a model (a loopback Chat Completions server) calls them by the names it was offered; the server
 * receives each call under its own name; the run's tool calls, events and approval carry the offered name; of the
 * tools that come out under one name the first is offered and the others are not, with one warning per check. An
 * agent's definition naming the integration or a tool as the server spells them still selects them.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zApprovalList, zInferenceResponse, zIntegration, zRunDetail, zRunEvent } from '../../../../../generated/zod.ts';
import { createLogger } from '../../log/index.ts';
import { scripted, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { startHelpDeskServer, type McpTestServer } from '@service/testing/mcp-servers';
import { testBackends, type TestStore } from '@service/testing/store';
import type { TestApp } from '@service/testing/app';
import { type AgentTestApp, createAgentTestApp } from '@service/testing/agent-app';
import { parseSseWithIds } from '@service/testing/sse';

/** `ToolCall.name`'s pattern in the contract. */
const CONTRACT_NAME = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;
const OFFERED = ['help_desk.send_email', 'help_desk.getcontact', 'help_desk.search_v2', 'help_desk.t_360_view'];
const USAGE = { prompt_tokens: 300, completion_tokens: 20 };
const ANSWER = { content: 'Done.', usage: { prompt_tokens: 350, completion_tokens: 2 } };

describe.each(testBackends())('tools named as their servers name them, on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let desk: McpTestServer;
  let t: TestApp;
  let key: string;
  let session: AgentTestApp['session'];
  let integrationId: string;
  let logLines: Record<string, unknown>[];

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    desk = await startHelpDeskServer();
    logLines = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    ({ t, session, integrationId } = await createAgentTestApp({
      db: store.db,
      model: fake,
      mcp: desk,
      integration: 'help-desk',
      logger: createLogger({ level: 'warn', destination }),
    }));
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'tenant:read');
  });
  afterEach(async () => {
    await fake.stop();
    await desk.close();
    await t?.close();
    await store.cleanup();
  });

  const invoke = () =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'sales', messages: [{ role: 'user', content: 'Help the customer.' }] }),
    });
  const withKey = (path: string) => t.app.request(path, { headers: { authorization: `Bearer ${key}` } });
  const detailOf = async (runId: string) => {
    const res = await withKey(`/v1/runs/${runId}`);
    expect(res.status).toBe(200);
    return zRunDetail.parse(await res.json());
  };
  const offeredToModel = (index = 0) => (fake.requests[index]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
  const warnings = () => logLines.filter((line) => line.level === 'warn');
  async function resumeAll(): Promise<number> {
    let resumed = 0;
    for (;;) {
      const outcome = await t.services.runs.claimResumption('inst_test');
      if (outcome === undefined) return resumed;
      if (outcome.kind === 'resumed') await t.services.runs.resume(outcome.resumption);
      resumed += 1;
    }
  }

  it('lists the tools under names of the contract, the colliding ones left out with one warning per check', async () => {
    const res = await session('GET', `/integrations/${integrationId}`);
    expect(res.status).toBe(200);
    const integration = zIntegration.parse(res.body);
    expect(integration.integration).toBe('help-desk');
    expect(integration.tools.map((tool) => [tool.name, tool.readOnly])).toEqual([
      ['help_desk.send_email', false],
      ['help_desk.getcontact', true],
      ['help_desk.search_v2', true],
      ['help_desk.t_360_view', true],
    ]);
    // The first of the server's `send-email`, `send_email` and `Send.Email` is offered.
    expect(integration.tools[0]!.description).toBe('Send an email to a customer.');

    // One warning of the connection check, naming the tools left out, never the server's address.
    expect(warnings()).toEqual([
      expect.objectContaining({
        workspaceId: t.workspaceId,
        integration: 'help-desk',
        collisions: [
          { name: 'help_desk.send_email', mcpName: 'send_email' },
          { name: 'help_desk.send_email', mcpName: 'Send.Email' },
        ],
      }),
    ]);
    expect(JSON.stringify(logLines)).not.toMatch(/127\.0\.0\.1|https:/);
    // Each check warns once more.
    const checked = await session('POST', `/integrations/${integrationId}/test`);
    expect(checked.status).toBe(200);
    expect(zIntegration.parse(checked.body).tools.map((tool) => tool.name)).toEqual(OFFERED);
    expect(warnings()).toHaveLength(2);
  });

  it('a model calls the tools by their offered names; the server receives its own names; the run records the offered ones', async () => {
    fake.handle = scripted([
      {
        toolCalls: [
          { id: 'call_1', name: 'help_desk__getcontact', arguments: { email: 'dana@example.com' } },
          { id: 'call_2', name: 'help_desk__search_v2', arguments: { query: 'renewal' } },
          { id: 'call_3', name: 'help_desk__t_360_view', arguments: {} },
        ],
        usage: USAGE,
      },
      ANSWER,
    ]);
    const res = await invoke();
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    expect(body.content).toBe('Done.');

    // Offered once each under the wire form of the name (`.` as `__`): none of the colliding tools.
    const offered = offeredToModel().filter((name) => name.startsWith('help'));
    expect(offered).toEqual(OFFERED.map((name) => name.replace('.', '__')));
    expect(desk.calls.map((call) => [call.tool, call.args])).toEqual([
      ['getContact', { email: 'dana@example.com' }],
      ['search.v2', { query: 'renewal' }],
      ['360-view', {}],
    ]);
    const results = (fake.requests[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(results.map((m) => m.content)).toEqual([
      'getContact found dana@example.com',
      'search.v2 found 2 tickets about renewal',
      '360-view: 3 tickets, 1 renewal',
    ]);

    const detail = await detailOf(body.runId);
    expect(detail.toolCalls.map((call) => [call.name, call.status])).toEqual([
      ['help_desk.getcontact', 'completed'],
      ['help_desk.search_v2', 'completed'],
      ['help_desk.t_360_view', 'completed'],
    ]);
    for (const call of detail.toolCalls) expect(call.name).toMatch(CONTRACT_NAME);

    const events = await withKey(`/v1/runs/${body.runId}/events`);
    expect(events.status).toBe(200);
    const called = parseSseWithIds(await events.text())
      .map((event) => zRunEvent.parse(event.data))
      .flatMap((event) => (event.type === 'tool.called' ? [event.name] : []));
    expect(called).toEqual(['help_desk.getcontact', 'help_desk.search_v2', 'help_desk.t_360_view']);
  });

  it("a call that needs approval: the approval and the step carry the offered name, and the server's first tool of that name is called", async () => {
    fake.handle = scripted([{ toolCalls: [{ id: 'call_1', name: 'help_desk__send_email', arguments: { to: 'dana@example.com' } }], usage: USAGE }, ANSWER]);
    const res = await invoke();
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    expect(body.waitingFor).toMatchObject({ action: 'help_desk.send_email' });
    const pending = await session('GET', '/approvals?status=pending');
    expect(pending.status).toBe(200);
    expect(zApprovalList.parse(pending.body).data.map((approval) => approval.action)).toEqual(['help_desk.send_email']);
    expect(desk.calls).toEqual([]);

    expect((await session('POST', `/approvals/${body.waitingFor!.id}/decision`, { decision: 'approved' })).status).toBe(200);
    expect(await resumeAll()).toBe(1);
    // `send-email`, not the `send_email` or `Send.Email` the server also has.
    expect(desk.calls.map((call) => [call.tool, call.args])).toEqual([['send-email', { to: 'dana@example.com' }]]);
    const detail = await detailOf(body.runId);
    expect(detail.run.status).toBe('completed');
    expect(detail.toolCalls).toEqual([
      expect.objectContaining({ name: 'help_desk.send_email', status: 'completed', result: 'send-email sent to dana@example.com' }),
    ]);
  });

  it("an agent's definition naming the integration or a tool as the server spells them selects what is offered", async () => {
    const configured = await session('PUT', '/agents/sales/configuration', {
      instructions: null,
      stepLimit: 8,
      tools: ['help-desk.360-view', 'help-desk.send-email'],
      approvals: { 'help-desk.send-email': 'not_required' },
    });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    fake.handle = scripted([{ toolCalls: [{ id: 'call_1', name: 'help_desk__send_email', arguments: { to: 'dana@example.com' } }], usage: USAGE }, ANSWER]);
    const res = await invoke();
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    // Not waiting: the policy written as `help-desk.send-email` is the policy of `help_desk.send_email`.
    expect(body.waitingFor).toBeUndefined();
    expect(offeredToModel().filter((name) => name.startsWith('help'))).toEqual(['help_desk__send_email', 'help_desk__t_360_view']);
    expect(desk.calls.map((call) => call.tool)).toEqual(['send-email']);
    expect((await detailOf(body.runId)).toolCalls.map((call) => call.name)).toEqual(['help_desk.send_email']);

    // The whole integration by its own name.
    expect((await session('PUT', '/agents/sales/configuration', { instructions: null, stepLimit: 8, tools: ['help-desk'], approvals: {} })).status).toBe(200);
    fake.handle = scripted([ANSWER]);
    expect((await invoke()).status).toBe(200);
    expect(offeredToModel(2).filter((name) => name.startsWith('help'))).toEqual(OFFERED.map((name) => name.replace('.', '__')));
  });
});
