/**
 * @module `@service/sdk` against the real server over HTTP (`service init --json`, `service serve` on a
 * loopback port), and through a loopback proxy that misbehaves on purpose for the retry rules.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/domain/sessions/totp.ts';
import { createSelfSignedCertificate, type HttpsTestReceiver, startHttpsTestReceiver } from '@service/testing/https-receiver';
import {
  AuthenticationError,
  ConnectionError,
  InternalServerError,
  InvalidRequestError,
  KillSwitchError,
  NotFoundError,
  PermissionError,
  QuotaExceededError,
  RateLimitError,
  ServiceClient,
  type ServiceError,
  TimeoutError,
  type VerifyWebhookResult,
  verifyWebhook,
} from '../src/index.ts';
import { type LiveServer, startLiveServer } from './support/live-server.ts';
import { type LoopbackProxy, startLoopbackProxy } from './support/loopback-proxy.ts';

const PORT = 19201;
const PROXY_PORT = 19202;
const DEAD_PORT = 19203;

const ask = (content: string) => ({ alias: 'Sonata' as const, messages: [{ role: 'user' as const, content }] });

let live: LiveServer;
let proxy: LoopbackProxy;
let receiver: HttpsTestReceiver;
let client: ServiceClient;
let admin: ServiceClient;
const verdicts: VerifyWebhookResult[] = [];
let webhookSecret = '';
let certDir = '';

/**
 * The suite sends a few hundred requests a minute from one address, more than the per-IP limit (60 a minute)
 * allows; the server trusts one proxy (TRUST_PROXY=1), so each request comes from its own client address.
 */
let address = 0;
const net: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  address += 1;
  headers.set('x-forwarded-for', `10.77.${(address >> 8) & 255}.${address & 255}`);
  return fetch(input, { ...init, headers });
};

/** A fetch that records each request's method and path, for counting requests. */
function countingFetch(log: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    log.push(`${init?.method ?? 'GET'} ${url.pathname}${url.search}`);
    return net(input, init);
  };
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`gave up waiting for ${what}`);
}

beforeAll(async () => {
  const certificate = createSelfSignedCertificate();
  receiver = await startHttpsTestReceiver(certificate, async (request) => {
    const result = await verifyWebhook({ rawBody: request.body, headers: request.headers, secret: webhookSecret });
    verdicts.push(result);
    return { status: result.ok ? 200 : result.status };
  });
  certDir = mkdtempSync(join(tmpdir(), 'sdk-test-ca-'));
  const caFile = join(certDir, 'receiver-ca.pem');
  writeFileSync(caFile, certificate.cert);
  live = await startLiveServer({
    port: PORT,
    // Prelude costs 2,000 STU a token, so two completed runs of ~460 tokens nearly fill the starter quota (quota_exceeded below).
    env: { TRUST_PROXY: '1', STU_RATE_PRELUDE: '2000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '100', NODE_EXTRA_CA_CERTS: caFile },
    setup: (cli) => cli('plan', 'set', 'starter'),
  });
  proxy = await startLoopbackProxy(PROXY_PORT, live.url);
  client = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: net });
  const { email, password, totpSecret } = live.init.admin;
  admin = await ServiceClient.login({ baseURL: live.url, fetch: net, email, password, totpCode: totpCode(totpSecret, new Date()) });
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await receiver?.close();
  await live?.dispose();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

describe('invocation', () => {
  it('answers synchronously with a typed body and its runId, and the run is readable', async () => {
    const answer = await client.inference.create(ask('Draft a follow-up email to a lead.'));
    expect(answer.runId).toMatch(/^run_[A-Za-z0-9]{16,32}$/);
    expect(answer.alias).toBe('Sonata');
    expect(answer.content.length).toBeGreaterThan(0);
    expect(Number.isInteger(answer.usage.inputTokens) && Number.isInteger(answer.usage.outputTokens)).toBe(true);
    const detail = await client.runs.retrieve(answer.runId);
    expect(detail.run).toMatchObject({ id: answer.runId, status: 'completed', content: answer.content });
    expect(Array.isArray(detail.steps) && Array.isArray(detail.toolCalls)).toBe(true);
  });

  it('streams fragments, then the end event with the runId and usage', async () => {
    const deltas: string[] = [];
    let end: { runId: string; usage: { inputTokens: number; outputTokens: number } } | undefined;
    for await (const event of client.inference.stream(ask('Summarise the pipeline by stage.'))) {
      if (event.type === 'delta') deltas.push(event.delta);
      else end = event;
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(end?.runId).toMatch(/^run_/);
    expect(end!.usage.outputTokens).toBeGreaterThan(0);
    const detail = await client.runs.retrieve(end!.runId);
    expect(detail.run.status).toBe('completed');
    expect(detail.run.content).toBe(deltas.join(''));
  });

  it('throws a ServiceError for a stream that ends with event: error', async () => {
    const deltas: string[] = [];
    const error = await caught(
      (async () => {
        for await (const event of client.inference.stream(ask('Write a long report [[fail-mid-stream]]'))) if (event.type === 'delta') deltas.push(event.delta);
      })(),
    );
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 200, code: 'engine_error' });
    expect(deltas.length).toBeGreaterThan(0);
    const runId = (error as ServiceError).runId!;
    expect((await client.runs.retrieve(runId)).run.status).toBe('failed');
  });

  it('aborts the request when the loop is left early: the run ends canceled, not by the hang limit', async () => {
    let first = '';
    for await (const event of client.inference.stream(ask('Keep talking [[hang]]'))) {
      if (event.type === 'delta') {
        first = event.delta;
        break;
      }
    }
    expect(first.length).toBeGreaterThan(0);
    const [newest] = (await client.runs.list({ limit: 1 })).data;
    const done = await client.runs.poll(newest!.id, { intervalMs: 100, maxIntervalMs: 500 });
    expect(done.run.status).toBe('canceled');
  });

  it('reaches the Set B routes: agents.list, agents.message, orchestrator.message; and mcp.createToken', async () => {
    const agents = await client.agents.list();
    expect(agents.data.map((a) => a.slug)).toContain('sales');
    const toSales = await client.agents.message('sales', ask('Follow up with Dana about the renewal.'));
    expect(toSales).toMatchObject({ agentSlug: 'sales', alias: 'Sonata' });
    const viaOrchestrator = await client.orchestrator.message(ask('Plan a marketing campaign.'));
    expect(viaOrchestrator.runId).toMatch(/^run_/);
    const ends: string[] = [];
    for await (const event of client.agents.messageStream('sales', ask('Draft a short intro.'))) if (event.type === 'end') ends.push(event.runId);
    for await (const event of client.orchestrator.messageStream(ask('Draft a short intro.'))) if (event.type === 'end') ends.push(event.runId);
    expect(ends).toHaveLength(2);
    for (const runId of ends) expect((await client.runs.retrieve(runId)).run.status).toBe('completed');
    const token = await client.mcp.createToken({ expiresInSeconds: 600 });
    expect(token).toMatchObject({ tokenType: 'Bearer', scopes: ['mcp:tenant'] });
    expect(token.token).toMatch(/^service_mcp_/);
    // The MCP bridge, through the generated layer, with the MCP token as the bearer of this call.
    const tools = await client.operations.callMcpRpc({ body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }, { bearer: token.token });
    expect(JSON.stringify(tools)).toContain('invoke_agent');
    // Every operation, by operationId, through the generated layer.
    const v1 = await client.operations.getRunV1({ path: { run_id: toSales.runId } });
    expect(v1.run.id).toBe(toSales.runId);
  });
});

describe('runs and usage', () => {
  it('lists the Stainless way: awaited, a page (its data and total, the next page); iterated, every run of every page', async () => {
    for (let i = 0; i < 3; i += 1) await client.inference.create(ask(`Lead ${i}: send the brochure.`));
    const page = await client.runs.list({ limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page).toMatchObject({ limit: 2, offset: 0 });
    expect(page.total).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(JSON.stringify(page))).toEqual({ data: page.data, total: page.total, limit: 2, offset: 0 });
    expect(page.hasNextPage()).toBe(true);
    const second = await page.getNextPage();
    expect(second).toMatchObject({ limit: 2, offset: 2, total: page.total });
    expect(second.data.map((run) => run.id)).not.toContain(page.data[0]!.id);

    const requests: string[] = [];
    const counted = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: countingFetch(requests) });
    const ids: string[] = [];
    for await (const run of counted.runs.list({ limit: 2 })) ids.push(run.id);
    expect(ids).toHaveLength(page.total);
    expect(new Set(ids).size).toBe(ids.length);
    expect(requests).toHaveLength(Math.ceil(page.total / 2));
    expect(requests[1]).toBe('GET /runs?limit=2&offset=2');

    // An awaited page iterates every run from itself on, reusing the page it already has.
    requests.length = 0;
    const first = await counted.runs.list({ limit: 2 });
    const fromPage: string[] = [];
    for await (const run of first) fromPage.push(run.id);
    expect(fromPage).toEqual(ids);
    expect(requests).toHaveLength(Math.ceil(page.total / 2));
    const pages = [];
    for await (const each of first.iterPages()) pages.push(each);
    expect(pages).toHaveLength(Math.ceil(page.total / 2));
    expect(pages.at(-1)!.hasNextPage()).toBe(false);
    await expect(pages.at(-1)!.getNextPage()).rejects.toThrow(/no next page/);
  });

  it('polls a run in progress until it is terminal', async () => {
    const held = client.inference.create(ask('Hold on [[hang]]'), { maxRetries: 0 }).catch((error: unknown) => error);
    let runId = '';
    await until(async () => {
      const page = await client.runs.list({ status: 'in_progress' });
      runId = page.data[0]?.id ?? '';
      return runId !== '';
    }, 'the held run');
    const requests: string[] = [];
    const counted = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: countingFetch(requests) });
    const polled = counted.runs.poll(runId, { intervalMs: 100, maxIntervalMs: 300 });
    await until(async () => requests.length >= 2, 'two reads of the run');
    await client.runs.cancel(runId);
    const done = await polled;
    expect(done.run).toMatchObject({ id: runId, status: 'canceled' });
    expect(requests.every((r) => r === `GET /runs/${runId}`)).toBe(true);
    await held;
  });

  it('reads the current period usage', async () => {
    const usage = await client.usage.current();
    expect(usage.period).toMatch(/^\d{4}-(0[1-9]|1[0-2])$/);
    expect(usage.consumedStu).toBeGreaterThan(0);
    expect(usage.quotaStu).toBe(2_000_000);
    expect(typeof usage.level).toBe('string');
    expect(Date.parse(usage.resetAt)).toBeGreaterThan(Date.now());
  });
});

describe('errors from the real server', () => {
  it('401: AuthenticationError with the code and the request id', async () => {
    const unknown = new ServiceClient({ apiKey: 'service_sk_live_AAAAAAAAAAAAAAAAAAAAAAAA', baseURL: live.url, fetch: net });
    const error = await caught(unknown.usage.current({ requestId: 'req_sdk_test_401' }));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'api_key_not_found', requestId: 'req_sdk_test_401' });
    const none = new ServiceClient({ apiKey: '', baseURL: live.url, fetch: net });
    expect(await caught(none.usage.current())).toMatchObject({ status: 401, code: 'missing_bearer' });
  });

  it('403: PermissionError with agentSlug for an agent outside the plan', async () => {
    const error = await caught(client.inference.create({ ...ask('Overdue invoices?'), agentSlug: 'finance' }));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ status: 403, code: 'agent_not_in_plan', agentSlug: 'finance' });
  });

  it('404: NotFoundError for an unknown run', async () => {
    const error = await caught(client.runs.retrieve('run_0000000000000000Zz'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
    expect((error as ServiceError).headers.get('x-request-id')).toBe((error as ServiceError).requestId);
  });

  it('400: InvalidRequestError for a body the contract refuses', async () => {
    const error = await caught(client.inference.create({ alias: 'GPT' as 'Sonata', messages: [] }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as ServiceError).status).toBe(400);
    expect(['invalid_body', 'invalid_request']).toContain((error as ServiceError).code);
  });

  it('503: InternalServerError for a run the engine could not complete', async () => {
    const error = await caught(client.inference.create(ask('Answer this [[fail]]'), { maxRetries: 0 }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect((error as ServiceError).headers.get('retry-after')).toBe('30');
    expect((error as ServiceError).headers.get('retry-after-ms')).toBe('30000');
  });

  it('503 with X-Should-Retry false: not retried, although the invocation carries its Idempotency-Key', async () => {
    // The same key would answer the same failed run: the server says so, and the SDK does not loop on it.
    const requests: string[] = [];
    const counted = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: countingFetch(requests) });
    const error = await caught(counted.inference.create(ask('Answer this too [[fail]]')));
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect((error as ServiceError).headers.get('x-should-retry')).toBe('false');
    expect(requests).toEqual(['POST /v1/inference']);
  });
});

describe('retries (through a loopback proxy)', () => {
  const viaProxy = (options: { maxRetries?: number; timeoutMs?: number } = {}) =>
    new ServiceClient({ apiKey: live.init.apiKey, baseURL: proxy.url, fetch: net, ...options });

  it('waits for Retry-After on 429 rate_limit_exceeded, then succeeds', async () => {
    proxy.seen.length = 0;
    proxy.script({ status: 429, headers: { 'retry-after': '1' }, body: { error: 'rate_limit_exceeded', retryAfterSec: 1 } });
    const usage = await viaProxy().usage.current();
    expect(usage.period).toMatch(/^\d{4}-\d{2}$/);
    expect(proxy.seen.map((r) => r.path)).toEqual(['/usage/current', '/usage/current']);
  });

  it('gives up after maxRetries and throws the last RateLimitError with retryAfterSec', async () => {
    proxy.seen.length = 0;
    const limited = { status: 429, headers: { 'retry-after': '0' }, body: { error: 'rate_limit_exceeded', retryAfterSec: 0 } };
    proxy.script(limited, limited, limited);
    const error = await caught(viaProxy({ maxRetries: 2 }).usage.current());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSec: 0, requestId: 'req_loopback_proxy' });
    expect(proxy.seen).toHaveLength(3);
  });

  it('retries a 503 on a read', async () => {
    proxy.seen.length = 0;
    proxy.script({ status: 503, headers: { 'retry-after': '0' }, body: { error: 'service_unavailable', requestId: 'req_x' } });
    await viaProxy().usage.current();
    expect(proxy.seen).toHaveLength(2);
  });

  it('prefers Retry-After-Ms to Retry-After', async () => {
    proxy.seen.length = 0;
    proxy.script({
      status: 429,
      headers: { 'retry-after': '30', 'retry-after-ms': '40', 'x-should-retry': 'true' },
      body: { error: 'rate_limit_exceeded', retryAfterSec: 30 },
    });
    const started = performance.now();
    await viaProxy().usage.current();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(proxy.seen).toHaveLength(2);
  });

  it('does not wait a Retry-After-Ms beyond a minute: throws at once', async () => {
    proxy.seen.length = 0;
    proxy.script({ status: 429, headers: { 'retry-after': '1', 'retry-after-ms': '90000' }, body: { error: 'rate_limit_exceeded', retryAfterSec: 90 } });
    const error = await caught(viaProxy().usage.current());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(proxy.seen).toHaveLength(1);
  });

  it('X-Should-Retry true retries what the SDK would not: a 503 of a POST without Idempotency-Key', async () => {
    proxy.seen.length = 0;
    proxy.script({
      status: 503,
      headers: { 'retry-after': '1', 'retry-after-ms': '20', 'x-should-retry': 'true' },
      body: { error: 'service_unavailable', message: 'The service is at capacity; retry shortly.', requestId: 'req_x' },
    });
    const token = await viaProxy().mcp.createToken({ expiresInSeconds: 600 });
    expect(token.token).toBeTruthy();
    expect(proxy.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/mcp/tenant/tokens', 'POST /v1/mcp/tenant/tokens']);
  });

  it('X-Should-Retry false is never retried, even a 503 of a read', async () => {
    proxy.seen.length = 0;
    proxy.script({ status: 503, headers: { 'retry-after': '0', 'x-should-retry': 'false' }, body: { error: 'service_unavailable', requestId: 'req_x' } });
    const error = await caught(viaProxy().usage.current());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(proxy.seen).toHaveLength(1);
  });

  it('never retries quota_exceeded or kill_switch', async () => {
    proxy.seen.length = 0;
    proxy.script({
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 120.5, resetAt: '2030-01-01T00:00:00.000Z' },
    });
    const quota = await caught(viaProxy().inference.create(ask('Hello')));
    expect(quota).toBeInstanceOf(QuotaExceededError);
    expect(quota).toMatchObject({ policy: 'hardstop', pctConsumed: 120.5, resetAt: '2030-01-01T00:00:00.000Z' });
    proxy.script({ status: 429, headers: { 'retry-after': '0' }, body: { error: 'kill_switch', kind: 'hour', activeSince: '2030-01-01T00:00:00.000Z' } });
    const kill = await caught(viaProxy().inference.create(ask('Hello')));
    expect(kill).toBeInstanceOf(KillSwitchError);
    expect(kill).toMatchObject({ kind: 'hour', activeSince: '2030-01-01T00:00:00.000Z' });
    expect(proxy.seen).toHaveLength(2);
  });

  it('retries an invocation whose answer was lost with the same Idempotency-Key: one run, not two', async () => {
    const before = (await client.runs.list({ limit: 1 })).total;
    proxy.seen.length = 0;
    proxy.script('drop-response');
    const answer = await viaProxy().inference.create(ask('Send the renewal proposal.'));
    expect(proxy.seen).toHaveLength(2);
    const keys = proxy.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect((await client.runs.list({ limit: 1 })).total).toBe(before + 1);
    expect((await client.runs.retrieve(answer.runId)).run.status).toBe('completed');
  });

  it("sends the caller's Idempotency-Key on each call", async () => {
    proxy.seen.length = 0;
    const first = await viaProxy().inference.create(ask('Same thing twice.'), { idempotencyKey: 'sdk-test-key-1' });
    const again = await viaProxy().inference.create(ask('Same thing twice.'), { idempotencyKey: 'sdk-test-key-1' });
    expect(again.runId).toBe(first.runId);
    expect(proxy.seen.map((r) => r.headers['idempotency-key'])).toEqual(['sdk-test-key-1', 'sdk-test-key-1']);
  });

  it('TimeoutError when no answer comes within timeoutMs; ConnectionError when nothing listens', async () => {
    proxy.script('hang');
    const timeout = await caught(viaProxy({ timeoutMs: 300, maxRetries: 0 }).usage.current());
    expect(timeout).toBeInstanceOf(TimeoutError);
    const dead = new ServiceClient({ apiKey: live.init.apiKey, baseURL: `http://127.0.0.1:${DEAD_PORT}`, maxRetries: 0, fetch: net });
    const refused = await caught(dead.usage.current());
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused).not.toBeInstanceOf(TimeoutError);
  });
});

describe('admin session', () => {
  it('refuses a wrong TOTP code with AuthenticationError', async () => {
    const { email, password } = live.init.admin;
    const error = await caught(ServiceClient.login({ baseURL: live.url, fetch: net, email, password, totpCode: '000000' }));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'not_authenticated' });
  });

  it('creates a key (secret once), which works for its scope only, and revokes it', async () => {
    expect(admin.session?.user.role).toMatch(/^(owner|admin)$/);
    const created = await admin.apiKeys.create({ name: 'sdk test', scopes: ['usage:read'] });
    expect(created.secret).toMatch(/^service_sk_live_[A-Za-z0-9]{24}$/);
    const limited = new ServiceClient({ apiKey: created.secret, baseURL: live.url, fetch: net });
    expect((await limited.usage.current()).quotaStu).toBe(2_000_000);
    const refused = await caught(limited.inference.create(ask('Hello')));
    expect(refused).toBeInstanceOf(PermissionError);
    expect(refused).toMatchObject({ status: 403, code: 'scope_required' });
    expect((await admin.apiKeys.list()).data.map((k) => k.id)).toContain(created.id);
    await admin.apiKeys.revoke(created.id);
    expect(await caught(limited.usage.current())).toMatchObject({ status: 401, code: 'api_key_not_found' });
  });

  it("reads the audit log: the key's creation and revocation, by this session's user, never its secret", async () => {
    const created = await admin.apiKeys.create({ name: 'audited', scopes: ['usage:read'] });
    await admin.apiKeys.revoke(created.id);
    const page = await admin.auditEvents.list({ target: created.id });
    expect(page.total).toBe(2);
    expect(page.data.map((e) => e.action)).toEqual(['key.revoked', 'key.created']);
    for (const event of page.data) expect(event.actor).toMatchObject({ type: 'user', id: admin.session!.user.id, label: admin.session!.user.email });
    expect(JSON.stringify(page)).not.toContain(created.secret);
    expect(await caught(client.auditEvents.list())).toMatchObject({ status: 401 });
  });

  it("reads the drafts a run wrote, and an agent's configuration, which an admin changes", async () => {
    const answer = await client.agents.message('sales', { alias: 'Sonata', messages: [{ role: 'user', content: 'Write an email to the new lead.' }] });
    const page = await admin.drafts.list({ run_id: answer.runId });
    expect(page).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(page.data[0]).toMatchObject({ runId: answer.runId, agentSlug: 'sales', kind: 'email' });
    expect(await admin.drafts.retrieve(page.data[0]!.id)).toEqual(page.data[0]);
    expect(await caught(admin.drafts.retrieve('drf_0000000000000000AAAA'))).toBeInstanceOf(NotFoundError);

    const before = await admin.agentConfigurations.retrieve('sales');
    expect(before).toMatchObject({ slug: 'sales', customInstructions: false, stepLimit: 8, tools: null });
    const after = await admin.agentConfigurations.update('sales', { instructions: 'Qualify leads.', stepLimit: 4, tools: ['crm'], approvals: {} });
    expect(after).toMatchObject({ instructions: 'Qualify leads.', customInstructions: true, stepLimit: 4, tools: ['crm'] });
    expect(await caught(admin.agentConfigurations.update('sales', { instructions: null, stepLimit: 40, tools: null, approvals: {} }))).toBeInstanceOf(
      InvalidRequestError,
    );
    expect(await caught(admin.agentConfigurations.retrieve('travel'))).toMatchObject({ status: 404, code: 'agent_not_found' });
  });

  it('a destination receives a real delivery that verifyWebhook accepts, and refuses replayed later without its webhook-* headers', async () => {
    const destination = await admin.webhooks.destinations.create({ url: `${receiver.origin}/hooks`, events: ['run.completed'] });
    webhookSecret = destination.secret;
    const answer = await client.inference.create(ask('Qualify the new lead.'));
    await until(
      async () => verdicts.some((v) => v.ok && v.event.type === 'run.completed' && v.event.data.run_id === answer.runId),
      'the run.completed delivery',
    );
    const verdict = verdicts.find((v) => v.ok && v.event.type === 'run.completed' && v.event.data.run_id === answer.runId);
    expect(verdict).toMatchObject({ ok: true, duplicate: false });
    // The same bytes with another secret do not verify.
    const request = receiver.received.at(-1)!;
    expect(await verifyWebhook({ rawBody: request.body, headers: request.headers, secret: 'whsec_wrong' })).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
    // Captured and sent again an hour later under a fresh X-SERVICE-Timestamp, the webhook-* headers stripped:
    // refused by default, and still refused with allowServiceSignatureOnly (the signed created_at is an hour old).
    const serviceOnly = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !name.startsWith('webhook-')));
    const later = Date.now() + 3_600_000;
    const replay = { ...serviceOnly, 'x-service-timestamp': String(Math.floor(later / 1000)) };
    expect(await verifyWebhook({ rawBody: request.body, headers: replay, secret: webhookSecret, now: later })).toEqual({
      ok: false,
      reason: 'missing_standard_signature',
      status: 401,
    });
    expect(await verifyWebhook({ rawBody: request.body, headers: replay, secret: webhookSecret, now: later, allowServiceSignatureOnly: true })).toEqual({
      ok: false,
      reason: 'created_at_too_old',
      status: 401,
    });
    // The same delivery now, with only X-SERVICE-*: verifies when the receiver allows it, not otherwise.
    expect(await verifyWebhook({ rawBody: request.body, headers: serviceOnly, secret: webhookSecret, allowServiceSignatureOnly: true })).toMatchObject({
      ok: true,
    });
    expect(await verifyWebhook({ rawBody: request.body, headers: serviceOnly, secret: webhookSecret })).toMatchObject({ reason: 'missing_standard_signature' });
  });
});

describe('switches set by the operator (server restarted)', () => {
  beforeAll(async () => {
    await live.stop();
    await live.cli('kill-switch', 'on');
    await live.cli('agents', 'pause', 'marketing', '--reason', 'Quarter close');
    await live.start();
  }, 60_000);

  it('429: KillSwitchError with kind and activeSince', async () => {
    const requests: string[] = [];
    const counted = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: countingFetch(requests) });
    const error = await caught(counted.inference.create(ask('Hello')));
    expect(error).toBeInstanceOf(KillSwitchError);
    expect(error).toMatchObject({ status: 429, code: 'kill_switch', kind: 'manual' });
    expect(Date.parse((error as KillSwitchError).activeSince!)).not.toBeNaN();
    expect(requests).toHaveLength(1);
  });

  it('403: agent_disabled with agentSlug and reason', async () => {
    const error = await caught(client.agents.message('marketing', ask('Plan a campaign.')));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ status: 403, code: 'agent_disabled', agentSlug: 'marketing', reason: 'Quarter close' });
  });
});

// Last: it spends the starter quota up to its hard stop, which every invocation after it would meet.
describe('the quota spent (manual switch off again)', () => {
  beforeAll(async () => {
    await live.stop();
    await live.cli('kill-switch', 'off');
    await live.start();
  }, 60_000);

  it('429: QuotaExceededError with policy, pctConsumed and resetAt, and no retry', async () => {
    // Prelude costs 2,000 STU a token and the starter quota's hard stop is 2.4 M STU. A completed run of ~460
    // input tokens is charged ~0.93 M (under the 1 M per-run limit); after two, a third passes the hard stop on
    // what is charged (not merely reserved by runs in progress: that is budget_reserved, and retried).
    const heavy = { alias: 'Prelude' as const, maxTokens: 16, messages: [{ role: 'user' as const, content: 'invoice '.repeat(450) }] };
    for (let i = 0; i < 2; i += 1) {
      const spent = await client.inference.create(heavy, { maxRetries: 0 }).catch((e: unknown) => e);
      if (spent instanceof Error) {
        expect(spent).toBeInstanceOf(QuotaExceededError);
        break;
      }
    }
    const requests: string[] = [];
    const counted = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: countingFetch(requests) });
    const error = await caught(counted.inference.create(heavy));
    expect(error).toBeInstanceOf(QuotaExceededError);
    // Below the hard stop, a request whose input does not fit in what is left is refused with the period's
    // level as usage reads it (never a `hardstop` that usage contradicts); at the stop, usage reads `hardstop` too.
    const usage = await client.usage.current();
    expect(error).toMatchObject({ status: 429, code: 'quota_exceeded', policy: usage.level });
    expect(typeof (error as QuotaExceededError).pctConsumed).toBe('number');
    expect(Date.parse((error as QuotaExceededError).resetAt!)).toBeGreaterThan(Date.now());
    expect(requests).toEqual(['POST /v1/inference']);
  });
});
