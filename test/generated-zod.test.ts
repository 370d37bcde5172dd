/**
 * @module The generated validators (generated/zod.ts, routes.ts, errors.ts) against the contract: the two
 * gaps closed after @hey-api/openapi-ts (strict objects, coerced numeric parameters), the spec's field
 * rules, and every example of the contract accepted by the schema the route table names for it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import * as zod from '../generated/zod.ts';
import { routes, webhookEvents } from '../generated/routes.ts';
import { ERROR_FIELDS, ERROR_STATUS } from '../generated/errors.ts';

type Json = any;
const bundle: Json = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'));
const schemas = zod as unknown as Record<string, ZodType>;
const route = (operationId: string) => {
  const found = routes.find((entry) => entry.operationId === operationId);
  if (!found) throw new Error(`no route ${operationId}`);
  return found;
};

const message = (content = 'Which invoices are overdue?') => ({ role: 'user', content });
const inference = (extra: Record<string, unknown> = {}) => ({ alias: 'Sonata', messages: [message()], ...extra });
const secret = 'service_sk_live_Xb7Qm2Lp9Tn4Vr8Kc1Zw5Hd3';

describe('additionalProperties: false becomes a strict object', () => {
  it('refuses an unknown field in the invocation body, the route body and a nested message', () => {
    expect(zod.zInferenceRequest.safeParse(inference()).success).toBe(true);
    expect(zod.zInferenceRequest.safeParse(inference({ workspaceId: 'wksp_9Qe3Tx7Lm2Vb8Nk4R' })).success).toBe(false);
    expect(route('createInference').request.body!.schema.safeParse(inference({ tenant: 'x' })).success).toBe(false);
    expect(zod.zInferenceRequest.safeParse(inference({ messages: [{ ...message(), name: 'dana' }] })).success).toBe(false);
  });

  const closed = Object.entries<Json>(bundle.components.schemas).filter(
    ([, schema]) => schema.additionalProperties === false && schema.properties && Array.isArray(schema.examples),
  );

  it('covers the closed component schemas that carry examples', () => {
    expect(closed.length).toBeGreaterThan(10);
  });

  it.each(closed)('%s accepts its example and refuses it with one unknown field', (name, schema) => {
    const validator = schemas[`z${name}`]!;
    const example = schema.examples[0];
    expect(validator.safeParse(example).success).toBe(true);
    expect(validator.safeParse({ ...example, unexpectedField: 1 }).success).toBe(false);
  });

  it('keeps open objects open (an error body may carry the extra fields of its code)', () => {
    const body = { error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 121.4, resetAt: '2026-12-01T00:00:00Z' };
    expect(zod.zQuotaExceededError.safeParse(body).success).toBe(true);
  });
});

describe('numeric parameters are coerced from strings', () => {
  const query = route('listRuns').request.query!;

  it('parses limit and offset from query text, with the same bounds and defaults', () => {
    expect(query.parse({ limit: '20', offset: '40' })).toEqual({ limit: 20, offset: 40 });
    expect(query.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(route('listRunsV1').request.query!.parse({ limit: '200' })).toEqual({ limit: 200, offset: 0 });
  });

  it.each([
    ['limit below 1', { limit: '0' }],
    ['limit above 200', { limit: '201' }],
    ['limit not an integer', { limit: '1.5' }],
    ['limit not a number', { limit: 'ten' }],
    ['negative offset', { offset: '-1' }],
    // Only plain decimal digits are a number in a parameter (issue 20: 0x10 and ' 5' were read as 16 and 5).
    ['limit in hexadecimal', { limit: '0x10' }],
    ['limit in octal', { limit: '0o10' }],
    ['limit in binary', { limit: '0b10' }],
    ['limit with a leading space', { limit: ' 5' }],
    ['limit with a trailing space', { limit: '5 ' }],
    ['limit with a tab', { limit: '\t5' }],
    ['limit with an exponent', { limit: '1e1' }],
    ['limit with a plus sign', { limit: '+5' }],
    ['limit with a decimal point', { limit: '5.0' }],
    ['limit as Infinity', { limit: 'Infinity' }],
    ['empty limit', { limit: '' }],
    ['offset past the safe integers', { offset: '99999999999999999999' }],
  ])('refuses %s', (_name, input) => {
    expect(query.safeParse(input).success).toBe(false);
  });

  it('coerces the component parameters too', () => {
    expect(zod.zLimitQuery.parse('7')).toBe(7);
    expect(zod.zOffsetQuery.parse('0')).toBe(0);
    expect(zod.zLimitQuery.safeParse('0x10').success).toBe(false);
  });

  it('every numeric parameter of the contract refuses text that is not plain decimal', () => {
    const numeric = routes.flatMap((r) =>
      (['query', 'params', 'headers'] as const).flatMap((part) => {
        const shape = (r.request[part] as { shape?: Record<string, ZodType> } | undefined)?.shape ?? {};
        return Object.entries(shape)
          .filter(([, schema]) => schema.safeParse('1').success && schema.safeParse('2').data === 2)
          .map(([name, schema]) => ({ where: `${r.operationId} ${part}.${name}`, schema }));
      }),
    );
    expect(numeric.length).toBeGreaterThan(5);
    for (const { where, schema } of numeric) {
      for (const text of ['0x1', ' 1', '1 ', '1e0', '+1', '1.0']) expect(schema.safeParse(text).success, `${where} took '${text}'`).toBe(false);
    }
  });

  it('leaves body integers strict (JSON carries numbers, a string is a client error)', () => {
    expect(zod.zInferenceRequest.safeParse(inference({ maxTokens: '800' })).success).toBe(false);
  });
});

describe('minProperties and maxProperties', () => {
  it('an empty update of a workspace is refused (minProperties: 1), one field is enough', () => {
    const body = route('updateWorkspace').request.body!.schema;
    expect(body.safeParse({}).success).toBe(false);
    expect(body.safeParse({ name: 'Acme' }).success).toBe(true);
    expect(zod.zUpdateWorkspaceRequest.safeParse({}).success).toBe(false);
  });

  it('every schema of the contract with minProperties or maxProperties enforces it', () => {
    const bounded = Object.entries<Json>(bundle.components.schemas).filter(
      ([, schema]) => schema.minProperties !== undefined || schema.maxProperties !== undefined,
    );
    expect(bounded.length).toBeGreaterThan(0);
    for (const [name, schema] of bounded) {
      const validator = schemas[`z${name}`]!;
      if (schema.minProperties > 0) expect(validator.safeParse({}).success, `${name} took {}`).toBe(false);
      const example = schema.examples?.[0];
      if (example) expect(validator.safeParse(example).success, `${name} refused its example`).toBe(true);
    }
  });
});

describe('field rules of the spec', () => {
  it.each([
    ['1 message', 1, true],
    ['100 messages', 100, true],
    ['no message', 0, false],
    ['101 messages', 101, false],
  ])('messages: %s', (_name, count, ok) => {
    const body = inference({ messages: Array.from({ length: count }, () => message()) });
    expect(zod.zInferenceRequest.safeParse(body).success).toBe(ok);
  });

  it.each([
    ['500,000 characters', 500_000, true],
    ['500,001 characters', 500_001, false],
    ['empty', 0, false],
  ])('content: %s', (_name, length, ok) => {
    expect(zod.zInferenceRequest.safeParse(inference({ messages: [message('x'.repeat(length))] })).success).toBe(ok);
  });

  it.each([
    [1, true],
    [32_000, true],
    [0, false],
    [32_001, false],
    [12.5, false],
  ])('maxTokens %s', (maxTokens, ok) => {
    expect(zod.zInferenceRequest.safeParse(inference({ maxTokens })).success).toBe(ok);
    expect(zod.zAgentMessageRequest.safeParse(inference({ maxTokens })).success).toBe(ok);
  });

  it('defaults agentSlug to orchestrator and stream to false', () => {
    expect(zod.zInferenceRequest.parse(inference())).toMatchObject({ agentSlug: 'orchestrator', stream: false });
  });

  it.each([
    ['*:*', false],
    ['admin', false],
    ['orchestrator:invoke', true],
    ['orchestrator:*', true],
    ['orchestrator:invoke:agent:sales', true],
    ['orchestrator:invoke:agent:Sales', false],
  ])('scope %s', (scope, ok) => {
    expect(zod.zScope.safeParse(scope).success).toBe(ok);
    const body = { name: 'CRM integration', scopes: [scope] };
    expect(route('createApiKey').request.body!.schema.safeParse(body).success).toBe(ok);
  });

  it('key creation needs a name of 1 to 100 characters, one scope, and 1 to 730 days (default 365)', () => {
    const body = zod.zCreateApiKeyRequest;
    expect(body.parse({ name: 'CRM', scopes: ['usage:read'] })).toMatchObject({ expiresInDays: 365 });
    expect(body.safeParse({ name: '', scopes: ['usage:read'] }).success).toBe(false);
    expect(body.safeParse({ name: 'x'.repeat(101), scopes: ['usage:read'] }).success).toBe(false);
    expect(body.safeParse({ name: 'CRM', scopes: [] }).success).toBe(false);
    expect(body.safeParse({ name: 'CRM', scopes: ['usage:read'], expiresInDays: 731 }).success).toBe(false);
    expect(body.safeParse({ name: 'CRM', scopes: ['usage:read'], expiresInDays: 0 }).success).toBe(false);
  });

  // Found by the contract fuzzer: a NUL character in a key name was accepted, then refused by the store (500).
  // Text that the store keeps refuses NUL (and a key name any control character) at validation time.
  it.each([
    ['a key name with NUL', () => zod.zCreateApiKeyRequest.safeParse({ name: 'CRM\u0000', scopes: ['usage:read'] })],
    ['a key name with a newline', () => zod.zCreateApiKeyRequest.safeParse({ name: 'CRM\nkey', scopes: ['usage:read'] })],
    ['message content with NUL', () => zod.zInferenceRequest.safeParse(inference({ messages: [message('a\u0000b')] }))],
    ['a conversationId with a tab', () => zod.zInferenceRequest.safeParse(inference({ conversationId: 'a\tb' }))],
  ])('refuses %s', (_name, parse) => {
    expect(parse().success).toBe(false);
  });

  it('keeps ordinary text: line breaks and Unicode in message content, spaces in a key name', () => {
    expect(zod.zInferenceRequest.safeParse(inference({ messages: [message('Bonjour,\n\tça va ? 你好 👋')] })).success).toBe(true);
    expect(zod.zCreateApiKeyRequest.safeParse({ name: 'CRM key · EU', scopes: ['usage:read'] }).success).toBe(true);
  });

  it.each([
    [secret, true],
    [secret.slice(0, -1), false],
    [`${secret}A`, false],
    [secret.replace('Xb7', 'Xb_'), false],
    [secret.replace('live', 'test'), false],
  ])('key secret %s', (value, ok) => {
    expect(zod.zApiKeySecret.safeParse(value).success).toBe(ok);
  });

  it.each([
    ['2026-12-01T00:00:00Z', true],
    ['2026-12-01T01:00:00+01:00', true],
    ['2026-12-01T00:00:00', false],
    ['2026-12-01', false],
  ])('date-time %s (RFC 3339, offset required)', (resetAt, ok) => {
    const body = { error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 120, resetAt };
    expect(zod.zQuotaExceededError.safeParse(body).success).toBe(ok);
  });

  it.each([
    ['run_7Hk2Lm9QvX4pT8sW3nB6', true],
    ['run_short', true],
    ['run_', false],
    [`run_${'a'.repeat(65)}`, false],
    ['run_short-1', false],
    ['evt_7Hk2Lm9QvX4pT8sW3nB6', false],
  ])('run id path parameter %s (any well-formed id is looked up)', (value, ok) => {
    expect(route('getRun').request.params!.safeParse({ run_id: value }).success).toBe(ok);
  });

  it.each([
    ['run_7Hk2Lm9QvX4pT8sW3nB6', true],
    ['run_short', false],
  ])('run id the service issues %s (RunId stays strict)', (value, ok) => {
    expect(zod.zRunId.safeParse(value).success).toBe(ok);
  });
});

describe('route table', () => {
  const operations = Object.entries<Json>(bundle.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );

  it('has exactly the operations of `paths`, with their security', () => {
    expect(routes.map((entry) => `${entry.method} ${entry.path}`).sort()).toEqual(operations.map((entry) => `${entry.method} ${entry.path}`).sort());
    expect(route('listRuns').security).toEqual([
      { scheme: 'apiKey', scopes: ['orchestrator:invoke'] },
      { scheme: 'apiKey', scopes: ['tenant:read'] },
      { scheme: 'adminSession', scopes: [] },
    ]);
    expect(route('login').security).toEqual([]);
    expect(route('revokeApiKey')).toMatchObject({ method: 'delete', path: '/api-keys/{id}', security: [{ scheme: 'adminSession', scopes: [] }] });
  });

  it('names headers in lowercase and requires the CSRF token on admin writes', () => {
    const headers = route('createApiKey').request.headers!;
    expect(headers.safeParse({}).success).toBe(false);
    expect(headers.safeParse({ 'x-csrf-token': 'c8Hq2Lm9Vx4Tp7Nw3Rb6Kd1Z' }).success).toBe(true);
  });

  it('describes the streamed form of an invocation and its events', () => {
    const ok = route('createInference').responses['200']!;
    expect(ok.contentType).toBe('application/json');
    expect(ok.alternatives?.[0]?.contentType).toBe('text/event-stream');
    const end = ok.alternatives?.[0]?.events?.end;
    expect(end?.safeParse({ done: true, runId: 'run_7Hk2Lm9QvX4pT8sW3nB6', usage: { inputTokens: 1, outputTokens: 2 } }).success).toBe(true);
  });

  // Every example the contract shows (and the Prism mock serves) must pass the validator the server uses.
  const examples = operations.flatMap(({ operation }) => {
    const cases: [string, string, string, unknown][] = [];
    for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
      const resolved = response.$ref ? resolve(response.$ref) : response;
      for (const [name, example] of Object.entries<Json>(resolved.content?.['application/json']?.examples ?? {})) {
        cases.push([operation.operationId, status, name, resolveExample(example)]);
      }
    }
    const body = operation.requestBody?.content?.['application/json'];
    for (const [name, example] of Object.entries<Json>(body?.examples ?? {})) cases.push([operation.operationId, 'body', name, resolveExample(example)]);
    return cases;
  });

  it.each(examples)('%s %s example %s validates', (operationId, status, _name, value) => {
    const spec = route(operationId);
    const schema = status === 'body' ? spec.request.body!.schema : spec.responses[status]!.schema!;
    const result = schema.safeParse(value);
    expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
  });

  it('lists every outbound event type with a payload that accepts its example', () => {
    expect(webhookEvents.map((event) => event.type).sort()).toEqual(Object.keys(bundle.webhooks).sort());
    for (const event of webhookEvents) {
      const media = bundle.webhooks[event.type].post.requestBody.content['application/json'];
      for (const example of Object.values<Json>(media.examples ?? {})) {
        expect(event.payload.safeParse(resolveExample(example)).success, event.type).toBe(true);
      }
    }
  });
});

describe('error table', () => {
  it('has the status of each code and the extra fields of the group schemas', () => {
    expect(ERROR_STATUS).toMatchObject({ missing_bearer: 401, invalid_body: 400, quota_exceeded: 429, not_implemented: 501, service_unavailable: 503 });
    expect(Object.keys(ERROR_STATUS)).toEqual(bundle.components.schemas.ErrorCode.enum);
    expect(ERROR_FIELDS.quota_exceeded?.required).toEqual(['policy', 'pctConsumed', 'resetAt']);
    expect(ERROR_FIELDS.kill_switch).toMatchObject({ required: ['kind'], optional: ['activeSince'] });
  });
});

function resolve(ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((node, key) => node[key], bundle);
}

function resolveExample(example: Json): unknown {
  return (example.$ref ? resolve(example.$ref) : example).value;
}
