import { describe, expect, it } from 'vitest';
import { runFuzz, type FuzzOptions } from '../src/runner.ts';
import { API_KEY, CSRF, INBOUND, MCP_TOKEN, SESSION, createMiniApp, type Bug } from './fixtures/mini-app.ts';

const CONTRACT = new URL('./fixtures/mini.openapi.json', import.meta.url).pathname;

function options(bugs: Bug[], extra: Partial<FuzzOptions> = {}): FuzzOptions {
  return {
    contract: CONTRACT,
    app: createMiniApp(bugs),
    seed: 12345,
    maxCases: 400,
    credentials: { apiKey: API_KEY, mcpToken: MCP_TOKEN, adminSession: { cookie: SESSION, csrfToken: CSRF }, inbound: { ...INBOUND } },
    parameters: { slug: INBOUND.slug },
    ...extra,
  };
}

// The setup hook creates a run through the app, so cases can address an existing resource.
const withRun: Partial<FuzzOptions> = {
  async setup({ transport }) {
    const res = await transport.send({
      method: 'POST',
      path: '/v1/inference',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { parameters: { run_id: (JSON.parse(res.text) as { runId: string }).runId } };
  },
};

describe('runFuzz against a correct server', () => {
  it('runs every phase and finds nothing', async () => {
    const result = await runFuzz(options([], { maxCases: 1500 }));
    expect(result.failures.map((f) => `${f.check}: ${f.label}: ${f.message}`)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.cases).toBeGreaterThan(1000);
    expect(result.warnings.filter((w) => w.startsWith('stateful'))).toEqual([]);
    // Every check ran on some exchange and passed there.
    const passed = new Set(
      result.operations.flatMap((o) =>
        Object.entries(o.checks)
          .filter(([, t]) => t!.passed > 0)
          .map(([c]) => c),
      ),
    );
    for (const check of [
      'not_a_server_error',
      'status_code_conformance',
      'response_schema_conformance',
      'negative_data_rejection',
      'positive_data_acceptance',
      'missing_required_header',
      'unsupported_method',
      'use_after_free',
      'ensure_resource_availability',
      'ignored_auth',
      'error_body_conformance',
    ]) {
      expect(passed).toContain(check);
    }
  });
});

// Each deliberately broken behaviour is caught by the check named after it (and the run fails).
const BUGS: [Bug, string, Partial<FuzzOptions>][] = [
  ['server-error', 'not_a_server_error', { operations: ['listRuns'] }],
  ['undocumented-status', 'status_code_conformance', { operations: ['listRuns'] }],
  ['wrong-content-type', 'content_type_conformance', { operations: ['listRuns'] }],
  ['missing-header', 'response_headers_conformance', { operations: ['createInference'] }],
  ['schema-violation', 'response_schema_conformance', { operations: ['createInference', 'getRun'] }],
  ['sse-bad-fragment', 'response_schema_conformance', { operations: ['createInference'] }],
  ['sse-bad-fragment', 'response_schema_conformance', { operations: ['openMcpStream'] }],
  ['accepts-invalid', 'negative_data_rejection', { operations: ['createInference'] }],
  ['rejects-valid', 'positive_data_acceptance', { operations: ['createInference'] }],
  ['ignores-missing-header', 'missing_required_header', { operations: ['createApiKey'] }],
  ['no-405', 'unsupported_method', { operations: ['listRuns'] }],
  ['ignored-auth', 'ignored_auth', { operations: ['getRun'], ...withRun }],
  ['revoked-key-works', 'use_after_free', { operations: ['createApiKey', 'rotateApiKey', 'revokeApiKey', 'listRuns'], phases: ['stateful'] }],
  ['run-lost', 'ensure_resource_availability', { operations: ['createInference', 'getRun'], phases: ['stateful'] }],
  ['provider-leak', 'no_provider_leak', { operations: ['createInference'] }],
  ['no-request-id', 'request_id_echoed', { operations: ['listRuns'] }],
  ['no-rate-limit-headers', 'rate_limit_headers_present', { operations: ['getRun'] }],
  ['error-code-status', 'error_body_conformance', { operations: ['getRun'] }],
  ['duplicate-inbound', 'inbound_event_idempotent', { operations: ['ingestInboundEvent', 'listRuns'], phases: ['stateful'] }],
  ['run-goes-back', 'run_states_forward', { operations: ['createInference', 'getRun'], phases: ['stateful'] }],
];

describe('runFuzz against a broken server', () => {
  it.each(BUGS)('%s is caught by %s', async (bug, check, extra) => {
    const result = await runFuzz(options([bug], extra));
    expect(result.ok).toBe(false);
    expect(result.failures.map((f) => f.check)).toContain(check);
    const failure = result.failures.find((f) => f.check === check)!;
    // Every failure carries a reproduction that names the request and hides the secrets.
    expect(failure.curl).toMatch(/^curl -X [A-Z]+ /);
    expect(failure.curl).toContain('http://localhost/');
    expect(failure.curl).not.toContain(API_KEY);
    expect(failure.curl).not.toContain(CSRF);
  });
});

describe('seeds', () => {
  const requests = (r: Awaited<ReturnType<typeof runFuzz>>) =>
    r.interactions.map((i) => {
      const { 'X-SERVICE-Timestamp': _t, ...headers } = i.request.headers;
      return { ...i.request, headers };
    });

  it('replays a run exactly with the same seed, and differs with another', async () => {
    const phases: FuzzOptions['phases'] = ['examples', 'coverage', 'fuzzing'];
    const a = await runFuzz(options([], { record: true, phases, seed: 7 }));
    const b = await runFuzz(options([], { record: true, phases, seed: 7 }));
    const c = await runFuzz(options([], { record: true, phases, seed: 8 }));
    expect(a.cases).toBeGreaterThan(300);
    expect(requests(b)).toEqual(requests(a));
    expect(requests(c)).not.toEqual(requests(a));
  });

  it('stops at the time budget and reports why', async () => {
    const r = await runFuzz(options([], { timeBudgetSec: 0 }));
    expect(r.stoppedBy).toBe('time-budget');
    expect(r.cases).toBeLessThan(50);
  });

  it('stops at max cases and reports why', async () => {
    const r = await runFuzz(options([], { maxCases: 50 }));
    expect(r.cases).toBe(50);
    expect(r.stoppedBy).toBe('max-cases');
  });
});
