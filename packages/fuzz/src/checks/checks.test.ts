import { describe, expect, it } from 'vitest';
import type { Case, PreparedRequest } from '../case.ts';
import { loadDocument } from '../contract/document.ts';
import { listOperations } from '../contract/operations.ts';
import { createValidator } from '../schema/validator.ts';
import type { RecordedResponse } from '../transport.ts';
import { ERROR_STATUS } from '../../../../generated/errors.ts';
import { CHECK_NAMES, CHECKS, DEFAULT_PROVIDER_NAMES, type CheckContext, type CheckName, type Step } from './index.ts';

const doc = loadDocument(new URL('../../test/fixtures/mini.openapi.json', import.meta.url).pathname);
const operations = listOperations(doc);
const validator = createValidator(doc);
const op = (id: string) => operations.find((o) => o.id === id)!;

const RL = { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '1893456000' };
const HEADERS = { 'content-type': 'application/json', 'x-request-id': 'req_abc', ...RL };
const RUN_ID = 'run_0123456789abcdef';

/** The same exchange on an operation whose responses document no header at all. */
function unlimited(c: CheckContext): CheckContext {
  const responses = Object.fromEntries(Object.entries(c.operation.responses).map(([status, r]) => [status, { ...r, headers: [] }]));
  return { ...c, operation: { ...c.operation, responses } };
}

function res(status: number, body: unknown, headers: Record<string, string> = {}, truncated = false): RecordedResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, statusText: '', headers: { ...HEADERS, ...headers }, body: new TextEncoder().encode(text), text, elapsedMs: 1, truncated };
}

interface Setup {
  op?: string;
  case?: Partial<Case>;
  request?: Partial<PreparedRequest>;
  history?: Step[];
}

function ctx(response: RecordedResponse, s: Setup = {}): CheckContext {
  const operation = op(s.op ?? 'createInference');
  const c: Case = { operation, phase: 'fuzzing', kind: 'positive', description: 'test', path: {}, query: {}, headers: {}, cookies: {}, ...s.case };
  const request: PreparedRequest = { method: operation.method.toUpperCase(), path: operation.path, headers: {}, ...s.request };
  return {
    operation,
    case: c,
    request,
    response,
    validator,
    doc,
    config: { errorStatus: ERROR_STATUS, providerNames: DEFAULT_PROVIDER_NAMES, positiveStatuses: ['2xx', '401', '403', '404'] },
    history: s.history ?? [],
  };
}

const GOOD_INFERENCE = { runId: RUN_ID, alias: 'Sonata', content: 'Hello', usage: { inputTokens: 3, outputTokens: 5 } };
const SSE_GOOD = `data: {"delta":"Hel"}\n\ndata: {"delta":"lo"}\n\nevent: end\ndata: {"done":true,"runId":"${RUN_ID}","usage":{"inputTokens":1,"outputTokens":2}}\n\n`;
const step = (method: string, path: string, status: number, operation = 'revokeApiKey'): Step => ({
  operation: op(operation),
  request: { method, path, headers: {} },
  response: res(status, {}),
});

type Pair = { good: CheckContext[]; broken: CheckContext[] };

// For every check: exchanges it must pass, and deliberately broken ones it must catch.
const TABLE: Record<CheckName, Pair> = {
  not_a_server_error: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(404, { error: 'not_found' }))],
    broken: [ctx(res(500, { error: 'internal_error', requestId: 'req_abc' })), ctx(res(503, 'down'))],
  },
  status_code_conformance: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(429, { error: 'rate_limit_exceeded' }))],
    broken: [ctx(res(418, {})), ctx(res(404, { error: 'not_found' }), { op: 'listRuns' })],
  },
  content_type_conformance: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(200, SSE_GOOD, { 'content-type': 'text/event-stream; charset=utf-8' }))],
    broken: [ctx(res(200, 'hello', { 'content-type': 'text/html' })), ctx(res(200, GOOD_INFERENCE, { 'content-type': '' }))],
  },
  response_headers_conformance: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(400, { error: 'invalid_body' }))],
    broken: [ctx(res(200, GOOD_INFERENCE, { 'x-request-id': undefined as unknown as string })), ctx(res(200, GOOD_INFERENCE, { 'x-ratelimit-limit': 'lots' }))],
  },
  response_schema_conformance: {
    good: [
      ctx(res(200, GOOD_INFERENCE)),
      ctx(res(200, SSE_GOOD, { 'content-type': 'text/event-stream' })),
      ctx(res(200, 'data: {"delta":"a"}\n\n', { 'content-type': 'text/event-stream' }, true)),
    ],
    broken: [
      ctx(res(200, { ...GOOD_INFERENCE, usage: { inputTokens: -1, outputTokens: 5 } })),
      ctx(res(200, { alias: 'gpt' })),
      ctx(res(200, '{not json')),
      ctx(res(200, SSE_GOOD.replace('"delta":"lo"', '"text":"lo"'), { 'content-type': 'text/event-stream' })),
      ctx(res(200, SSE_GOOD.replace('"done":true', '"done":false'), { 'content-type': 'text/event-stream' })),
      ctx(res(200, 'data: {"delta":"a"}\n\n', { 'content-type': 'text/event-stream' })),
      ctx(res(200, 'event: surprise\ndata: {}\n\n', { 'content-type': 'text/event-stream' })),
    ],
  },
  negative_data_rejection: {
    good: [ctx(res(400, { error: 'invalid_body' }), { case: { kind: 'negative' } }), ctx(res(200, GOOD_INFERENCE))],
    broken: [ctx(res(200, GOOD_INFERENCE), { case: { kind: 'negative' } }), ctx(res(201, {}), { case: { kind: 'negative' } })],
  },
  positive_data_acceptance: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(404, { error: 'not_found' })), ctx(res(429, { error: 'rate_limit_exceeded' }))],
    broken: [ctx(res(400, { error: 'invalid_body' })), ctx(res(405, { error: 'method_not_allowed' }))],
  },
  missing_required_header: {
    good: [
      ctx(res(400, { error: 'invalid_request' }), { case: { missingHeader: 'X-CSRF-Token', kind: 'negative' } }),
      ctx(res(401, { error: 'missing_bearer' }), { case: { missingHeader: 'Authorization', kind: 'negative' } }),
    ],
    broken: [
      ctx(res(200, {}), { case: { missingHeader: 'X-CSRF-Token', kind: 'negative' } }),
      ctx(res(400, {}), { case: { missingHeader: 'Authorization', kind: 'negative' } }),
    ],
  },
  unsupported_method: {
    good: [ctx(res(405, { error: 'method_not_allowed' }, { allow: 'POST' }), { case: { method: 'PATCH' } })],
    broken: [
      ctx(res(404, { error: 'not_found' }), { case: { method: 'PATCH' } }),
      ctx(res(405, { error: 'method_not_allowed' }), { case: { method: 'PATCH' } }),
    ],
  },
  use_after_free: {
    good: [
      ctx(res(404, {}), { op: 'revokeApiKey', request: { method: 'DELETE', path: '/api-keys/key_1' }, history: [step('DELETE', '/api-keys/key_1', 200)] }),
      ctx(res(200, {}), { op: 'listRuns', request: { method: 'GET', path: '/api-keys' }, history: [step('DELETE', '/api-keys/key_1', 200)] }),
    ],
    broken: [
      ctx(res(200, {}), { op: 'revokeApiKey', request: { method: 'DELETE', path: '/api-keys/key_1' }, history: [step('DELETE', '/api-keys/key_1', 200)] }),
      ctx(res(201, {}), { request: { method: 'POST', path: '/api-keys/key_1/rotate' }, history: [step('DELETE', '/api-keys/key_1', 204)] }),
    ],
  },
  ensure_resource_availability: {
    good: [ctx(res(200, {}), { op: 'getRun', case: { phase: 'stateful' }, history: [step('POST', '/v1/inference', 200, 'createInference')] })],
    broken: [
      ctx(res(404, { error: 'not_found' }), {
        op: 'getRun',
        case: { phase: 'stateful' },
        request: { method: 'GET', path: `/runs/${RUN_ID}` },
        history: [step('POST', '/v1/inference', 200, 'createInference')],
      }),
    ],
  },
  ignored_auth: {
    good: [ctx(res(401, { error: 'missing_bearer' }), { case: { withoutAuth: true, description: 'no credentials' } }), ctx(res(200, {}))],
    broken: [ctx(res(200, GOOD_INFERENCE), { case: { withoutAuth: true, description: 'no credentials' } })],
  },
  rate_limit_headers_present: {
    good: [
      ctx(res(200, {})),
      ctx(res(429, { error: 'rate_limit_exceeded', retryAfterSec: 3 }, { 'retry-after': '3' })),
      // An operation that documents no rate-limit header (a health route outside the limits): none is expected.
      unlimited(
        ctx(
          res(
            200,
            { status: 'ok' },
            {
              'x-ratelimit-limit': undefined as unknown as string,
              'x-ratelimit-remaining': undefined as unknown as string,
              'x-ratelimit-reset': undefined as unknown as string,
            },
          ),
        ),
      ),
    ],
    broken: [
      ctx(res(200, {}, { 'x-ratelimit-remaining': undefined as unknown as string })),
      ctx(res(200, {}, { 'x-ratelimit-reset': '1893456000000' })),
      ctx(res(200, {}, { 'x-ratelimit-remaining': '700' })),
      ctx(res(429, { error: 'rate_limit_exceeded', retryAfterSec: 3 })),
    ],
  },
  request_id_echoed: {
    good: [ctx(res(200, {})), ctx(res(200, {}, { 'x-request-id': 'mine-1' }), { request: { headers: { 'X-Request-Id': 'mine-1' } } })],
    broken: [
      ctx(res(200, {}, { 'x-request-id': '' })),
      ctx(res(200, {}, { 'x-request-id': 'req_other' }), { request: { headers: { 'X-Request-Id': 'mine-1' } } }),
    ],
  },
  error_body_conformance: {
    good: [
      ctx(res(200, GOOD_INFERENCE)),
      ctx(res(404, { error: 'not_found', message: 'Not found' })),
      ctx(res(429, { error: 'quota_exceeded', policy: 'hardstop', pctConsumed: 121.5, resetAt: '2026-12-01T00:00:00Z' })),
      ctx(res(500, { error: 'internal_error', requestId: 'req_abc' })),
      ctx(res(403, { error: 'scope_required', message: 'Missing scope usage:read' })),
    ],
    broken: [
      ctx(res(404, 'Not Found', { 'content-type': 'text/plain' })),
      ctx(res(400, { error: 'bad_things' })),
      ctx(res(400, { error: 'not_found' })),
      ctx(res(429, { error: 'quota_exceeded', policy: 'red', pctConsumed: 121.5, resetAt: '2026-12-01T00:00:00Z' })),
      ctx(res(429, { error: 'rate_limit_exceeded', retryAfterSec: 2 })),
      ctx(res(500, { error: 'internal_error' })),
      ctx(res(500, { error: 'internal_error', requestId: 'req_zzz' })),
      ctx(res(403, { error: 'agent_unknown' })),
      ctx(res(400, { message: 'no code' })),
    ],
  },
  no_provider_leak: {
    good: [ctx(res(200, GOOD_INFERENCE)), ctx(res(200, { content: 'The Sonata alias wrote a lovely melody.' }))],
    broken: [
      ctx(res(200, { ...GOOD_INFERENCE, content: 'As an OpenAI model...' })),
      ctx(res(200, { model: 'gpt-4o-mini' })),
      ctx(res(200, GOOD_INFERENCE, { 'x-upstream': 'api.anthropic.com' })),
      ctx(res(500, { error: 'internal_error', requestId: 'req_abc', message: 'ollama connection refused' })),
      ctx(res(200, 'data: {"delta":"claude-3"}\n\n', { 'content-type': 'text/event-stream' })),
    ],
  },
};

describe('checks', () => {
  it('every check has a table entry', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...CHECK_NAMES].sort());
  });

  describe.each(CHECK_NAMES)('%s', (name) => {
    it.each(TABLE[name].good.map((c, i) => [i, c] as const))('passes good exchange #%i', (_i, c) => {
      expect(CHECKS[name](c)).toBeUndefined();
    });
    it.each(TABLE[name].broken.map((c, i) => [i, c] as const))('catches broken exchange #%i', (_i, c) => {
      expect(CHECKS[name](c)).toEqual(expect.any(String));
    });
  });
});

describe('positive_data_acceptance per operation', () => {
  it('accepts the statuses configured for that operation only', () => {
    const c = ctx(res(400, { error: 'payload_invalid' }));
    c.config = { ...c.config, positiveStatusesByOperation: { createInference: ['2xx', '400'] } };
    expect(CHECKS.positive_data_acceptance(c)).toBeUndefined();
    c.config = { ...c.config, positiveStatusesByOperation: { listRuns: ['2xx', '400'] } };
    expect(CHECKS.positive_data_acceptance(c)).toEqual(expect.any(String));
  });
});
