/**
 * Traces, end to end: the real server (`service serve`, embedded PGlite) with traces on sends its spans over OTLP/HTTP
 * (JSON) to a loopback collector in this test. One invocation with a `traceparent` header, on an alias served by a
 * Chat Completions server (the fake one) that asks for a tool then answers, with a webhook destination on a loopback
 * HTTPS receiver: the spans arrive, sent by the graceful stop (the batch processor waits longer than the test), in the caller's trace, named and attributed as
 * docs/operations.md says; the provider and the receiver got the trace context; and no attribute value holds the
 * model's name, the provider's host or key, a secret, the prompt or the answer. With traces off, the same server sends
 * nothing, sends no `traceparent`, and never loads the SDK (a module hook in the process reports what it resolves).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, until, type CliProcesses } from '@service/testing/cli-processes';
import { scripted, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver } from '@service/testing/https-receiver';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number; arrayValue?: unknown };
}
interface OtlpExport {
  resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const MODEL = 'acme-frontier-sonata-7b';
const PROVIDER_KEY = 'sk-provider-Tr4ceSecretKey0000000001';
const PROMPT = 'Draft a reply about the overdue invoice INV-77123.';
const ANSWER = 'I drafted the reply about the invoice for your review.';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';
/** The inbound event's and the run read's traces. */
const INBOUND_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const READ_TRACE_ID = '5b8efff798038103d269b633813fc60c';
const QUERY_TOKEN = 'query-token-Zx81';
const SERVER_SPAN = 2;
const CLIENT_SPAN = 3;

function attributeValue(attribute: OtlpAttribute): unknown {
  const { value } = attribute;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.arrayValue;
}

function attributesOf(span: { attributes?: OtlpAttribute[] }): Record<string, unknown> {
  return Object.fromEntries((span.attributes ?? []).map((attribute) => [attribute.key, attributeValue(attribute)]));
}

describe('traces over OTLP/HTTP', () => {
  let dir: string;
  let collector: Server;
  let collectorUrl: string;
  const exports: OtlpExport[] = [];
  const exportHeaders: string[] = [];
  let fake: FakeChatServer;
  let receiver: HttpsTestReceiver;
  let env: NodeJS.ProcessEnv;
  let apiKey: string;
  let destinationSecret: string;
  let inboundSecret: string;
  let cli: CliProcesses;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'traces-'));
    // The collector: a real HTTP server decoding what the exporter posts (OTLP/HTTP, JSON).
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        exportHeaders.push(String(req.headers['content-type']));
        if (req.url === '/v1/traces') exports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    fake = await startFakeChatServer();
    const certificate = createSelfSignedCertificate();
    writeFileSync(join(dir, 'receiver-ca.pem'), certificate.cert);
    receiver = await startHttpsTestReceiver(certificate, () => ({ status: 200 }));
    // Reports every OpenTelemetry package but the API that the process resolves (the SDK, the exporter, …).
    writeFileSync(
      join(dir, 'report-sdk.mjs'),
      `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/') && specifier !== '@opentelemetry/api' && !specifier.startsWith('@opentelemetry/semantic-conventions')) process.stderr.write('otel-sdk-loaded ' + specifier + '\\n');
  return next(specifier, context);
} });
`,
    );
    env = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'METRICS_PORT']) delete env[name];
    Object.assign(env, {
      ENGINE_SONATA: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: fake.baseURL,
      OPENAI_COMPATIBLE_API_KEY: PROVIDER_KEY,
      OPENAI_COMPATIBLE_MODEL_SONATA: MODEL,
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_MS: '100',
      NODE_EXTRA_CA_CERTS: join(dir, 'receiver-ca.pem'),
      NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(join(dir, 'report-sdk.mjs')).href}`.trim(),
    });
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
    destinationSecret = (
      JSON.parse(
        await cli.run(
          'webhooks',
          'outbound',
          'create',
          '--url',
          `${receiver.origin}/hooks/private-path?token=tenant-token-123`,
          '--events',
          'run.completed',
          '--json',
        ),
      ) as {
        secret: string;
      }
    ).secret;
    // An inbound webhook whose runs the local engine answers (Prelude): its event's ingestion is traced.
    inboundSecret = (
      JSON.parse(await cli.run('webhooks', 'inbound', 'create', '--slug', 'crm-leads', '--agent', 'sales', '--alias', 'Prelude', '--json')) as {
        secret: string;
      }
    ).secret;
  }, 60_000);

  afterAll(async () => {
    cli?.killAll();
    await fake?.stop();
    await receiver?.close();
    await new Promise((resolve) => collector?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** One invocation of the sales agent on Sonata: the model asks for `draft.create`, then answers. */
  async function invoke(url: string, traceparent: string) {
    fake.handle = scripted([
      {
        toolCalls: [{ id: 'call_1', name: 'draft__create', arguments: { kind: 'email', subject: 'Invoice INV-77123', body: 'Dear customer, …' } }],
        usage: { prompt_tokens: 120, completion_tokens: 30 },
      },
      { content: ANSWER, usage: { prompt_tokens: 180, completion_tokens: 12 } },
    ]);
    const res = await fetch(`${url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', traceparent },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { runId: string };
    expect(answer).toMatchObject({ agentSlug: 'sales', alias: 'Sonata', content: ANSWER });
    return answer.runId;
  }

  async function stop(server: Awaited<ReturnType<CliProcesses['serve']>>): Promise<string> {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    expect(server.child.exitCode).toBe(0);
    return server.output();
  }

  it('on: the spans of one invocation arrive in the caller trace, named and attributed, with nothing confidential; the provider and the receiver get traceparent', {
    timeout: 240_000,
  }, async () => {
    const cliOn = cliProcesses(dir, { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_SERVICE_NAME: 'ais-test', OTEL_BSP_SCHEDULE_DELAY: '3000000' });
    const server = await cliOn.serve();
    let output: string;
    let runId = '';
    try {
      expect(server.output()).toContain('Traces: sent over OTLP/HTTP');
      fake.requests.length = 0;
      runId = await invoke(server.url, `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`);
      await until(() => receiver.received.length > 0, 'the run.completed delivery');
      // A read whose path holds the run's id and whose query holds a token, then a signed inbound event.
      const read = await fetch(`${server.url}/runs/${runId}?token=${QUERY_TOKEN}`, {
        headers: { authorization: `Bearer ${apiKey}`, traceparent: `00-${READ_TRACE_ID}-${PARENT_SPAN_ID}-01` },
      });
      expect(read.status).toBe(200);
      const inbound = JSON.stringify({ event: 'lead.created', contact: { name: 'Ada Lovelace' } });
      const ingested = await fetch(`${server.url}/webhooks/inbound/crm-leads`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-event-id': 'evt-trace-1',
          'x-service-signature': signInboundBody(inbound, inboundSecret),
          traceparent: `00-${INBOUND_TRACE_ID}-${PARENT_SPAN_ID}-01`,
        },
        body: inbound,
      });
      expect(ingested.status).toBe(200);
      // Its run (the worker's, on the local engine) ends before the stop: its run.completed is the second delivery.
      await until(() => receiver.received.length >= 2, "the inbound run's delivery");
      // The batch processor waits 50 minutes between exports here: what arrives is what the graceful stop sent.
      expect(exports).toHaveLength(0);
      output = await stop(server);
    } finally {
      cliOn.killAll();
    }
    expect(output).toMatch(/otel-sdk-loaded @opentelemetry\/sdk-trace/);

    const spans = exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    expect(exportHeaders.every((type) => type.startsWith('application/json'))).toBe(true);
    // The invocation's trace (the inbound event's run, on another trace, has spans of the same names).
    const named = (name: string) => spans.filter((span) => span.name === name && span.traceId === TRACE_ID);

    // The request's server span continues the caller's trace.
    const [request] = named('POST /v1/inference');
    expect(request).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT_SPAN_ID, kind: SERVER_SPAN });
    expect(attributesOf(request!)).toEqual({
      'http.request.method': 'POST',
      'http.route': '/v1/inference',
      'http.response.status_code': 200,
      'url.scheme': 'http',
    });

    // The run, its two model calls, its tool call, its two statements: the same trace, under the request.
    const [agent] = named('invoke_agent sales');
    expect(agent).toMatchObject({ traceId: TRACE_ID, parentSpanId: request!.spanId });
    expect(attributesOf(agent!)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'sales', 'gen_ai.request.model': 'Sonata' });
    const chats = named('chat Sonata');
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat).toMatchObject({ traceId: TRACE_ID, parentSpanId: agent!.spanId, kind: CLIENT_SPAN });
    expect(chats.map((chat) => attributesOf(chat)['gen_ai.usage.input_tokens']).sort()).toEqual([120, 180]);
    expect(attributesOf(chats[0]!)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'Sonata',
      'gen_ai.usage.output_tokens': expect.any(Number),
    });
    const [tool] = named('execute_tool draft.create');
    expect(tool).toMatchObject({ traceId: TRACE_ID, parentSpanId: agent!.spanId });
    expect(attributesOf(tool!)).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'draft.create' });
    for (const name of ['start_runs', 'finish_run']) {
      const [statement] = named(name);
      expect(statement, name).toMatchObject({ traceId: TRACE_ID, kind: CLIENT_SPAN });
      expect(attributesOf(statement!)).toEqual({
        'db.system': 'postgresql',
        'db.system.name': 'postgresql',
        'db.operation.name': 'SELECT',
        'db.stored_procedure.name': name,
        'db.operation.batch.size': 1,
      });
    }

    // Each request to the provider carried its chat span's context.
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.map((r) => r.headers.traceparent).sort()).toEqual(chats.map((chat) => `00-${TRACE_ID}-${chat.spanId}-01`).sort());

    // The read: its route as the contract writes it (no run id, no query), its status.
    const [read] = spans.filter((span) => span.traceId === READ_TRACE_ID);
    expect(read).toMatchObject({ name: 'GET /runs/{run_id}', parentSpanId: PARENT_SPAN_ID, kind: SERVER_SPAN });
    expect(attributesOf(read!)).toEqual({
      'http.request.method': 'GET',
      'http.route': '/runs/{run_id}',
      'http.response.status_code': 200,
      'url.scheme': 'http',
    });

    // The inbound event: its request, and its ingestion's statement under it.
    const inboundSpans = spans.filter((span) => span.traceId === INBOUND_TRACE_ID);
    const inboundRequest = inboundSpans.find((span) => span.name === 'POST /webhooks/inbound/{slug}');
    expect(inboundRequest).toMatchObject({ parentSpanId: PARENT_SPAN_ID, kind: SERVER_SPAN });
    expect(attributesOf(inboundRequest!)).toMatchObject({ 'http.route': '/webhooks/inbound/{slug}', 'http.response.status_code': 200 });
    const ingestion = inboundSpans.find((span) => span.name === 'ingest_inbound_event');
    expect(ingestion).toMatchObject({ parentSpanId: inboundRequest!.spanId, kind: CLIENT_SPAN });
    expect(attributesOf(ingestion!)).toMatchObject({
      'db.system': 'postgresql',
      'db.stored_procedure.name': 'ingest_inbound_event',
      'db.operation.batch.size': 1,
    });

    // The delivery attempt's span: its number and status code, and the receiver got its context.
    const sent = receiver.received[0]!.headers.traceparent;
    const delivery = spans.find((span) => span.name === 'POST' && span.kind === CLIENT_SPAN && sent === `00-${span.traceId}-${span.spanId}-01`);
    expect(delivery).toBeDefined();
    // A trace of its own: whatever woke the worker, the receiver never sees another request's trace.
    expect(delivery!.parentSpanId ?? '').toBe('');
    expect(delivery!.traceId).not.toBe(TRACE_ID);
    expect(attributesOf(delivery!)).toEqual({
      'http.request.method': 'POST',
      'http.request.resend_count': 0,
      'service.delivery.attempt': 1,
      'http.response.status_code': 200,
    });

    const resource = attributesOf(exports[0]!.resourceSpans[0]!.resource ?? {});
    expect(resource['service.name']).toBe('ais-test');

    // Nothing confidential in any attribute of any span or of the resource.
    const values = [
      ...spans.flatMap((span) => [span.name, ...Object.values(attributesOf(span))]),
      ...exports.flatMap((e) => e.resourceSpans.flatMap((r) => Object.values(attributesOf(r.resource ?? {})))),
    ].map((value) => JSON.stringify(value));
    const port = new URL(fake.baseURL).port;
    const forbidden = [
      MODEL,
      'acme',
      PROVIDER_KEY,
      '127.0.0.1',
      'localhost',
      port,
      apiKey,
      destinationSecret,
      'private-path',
      'tenant-token-123',
      'INV-77123',
      ANSWER,
      'Dear customer',
      'openai',
      runId,
      QUERY_TOKEN,
      'crm-leads',
      inboundSecret,
      'Ada Lovelace',
    ];
    for (const value of values) for (const word of forbidden) expect(value.toLowerCase().includes(word.toLowerCase()), `${word} in ${value}`).toBe(false);
  });

  it('off (no OTEL_* variable): nothing is sent, no traceparent goes out, and the SDK is never loaded', { timeout: 240_000 }, async () => {
    const before = exports.length;
    const server = await cli.serve();
    expect(server.output()).toContain('Traces: off');
    fake.requests.length = 0;
    receiver.received.length = 0;
    await invoke(server.url, `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`);
    await until(() => receiver.received.length > 0, 'the run.completed delivery');
    const output = await stop(server);
    expect(exports.length).toBe(before);
    expect(output).not.toContain('otel-sdk-loaded');
    expect(fake.requests.map((r) => r.headers.traceparent)).toEqual([undefined, undefined]);
    expect(receiver.received[0]!.headers.traceparent).toBeUndefined();
  });
});
