/**
 * @module Contract fuzzing of the real server, in-process: every operation of generated/openapi.json, every
 * phase, Schemathesis's checks and ours, through `app.request`, on each test store (in-memory PGlite, and PostgreSQL
 * when DATABASE_URL is set: @service/testing/store).
 *
 * A failure message lists each failure with its check and a curl command. The seed is fixed so that CI is
 * repeatable; explore with another one (`FUZZ_SEED=<n>`, or `FUZZ_SEED=random`) and turn what it finds into a
 * regression test before changing the default.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../generated/errors.ts';
import { createTestApp } from '@service/testing/app';
import { testBackends } from '@service/testing/store';
import { runFuzz, type FuzzSetup } from '../packages/fuzz/src/index.ts';

// The fuzzer sends thousands of requests from one "IP": a limiter that admits all but still reports the
// window keeps rate_limit_headers_present meaningful without turning every case into a 429.
const admitAll = {
  async hit(_key: string, limit: number, windowMs: number) {
    return { allowed: true, limit, remaining: limit - 1, resetAt: Math.ceil((Date.now() + windowMs) / 1000), retryAfterSec: 0 };
  },
};

describe.each(testBackends())('contract fuzzing of the server (in-process) on $name', ({ open }) => {
  it('keeps the contract over every phase', { timeout: 180_000 }, async () => {
    const store = await open();
    const t = await createTestApp({ db: store.db, deps: { limiter: admitAll } });
    try {
      const result = await runFuzz({
        contract: new URL('../generated/openapi.json', import.meta.url).pathname,
        app: t.app,
        seed: fuzzSeed(process.env.FUZZ_SEED),
        maxCases: Number(process.env.FUZZ_MAX_CASES ?? 3000),
        timeBudgetSec: 120,
        errorStatus: ERROR_STATUS,
        // A documented 400 invalid_body for an otherwise valid body: a slug already in use (createInboundWebhook); a
        // server that fails the connection check (createIntegration: the examples' hosts do not exist here); both
        // `background` and `stream` true (the invocations: a cross-field rule the schema cannot say to the generator); a
        // message other than `initialize` without its `Mcp-Session-Id` (postMcpMessage: the header is required by the
        // body's method, which a header schema cannot say).
        positiveStatusesByOperation: Object.fromEntries(
          ['createInboundWebhook', 'createIntegration', 'createInference', 'sendAgentMessage', 'sendOrchestratorMessage', 'postMcpMessage'].map((op) => [
            op,
            ['2xx', '400', '401', '403', '404'],
          ]),
        ),
        async setup() {
          const adminSession = await t.login();
          const token = await t.app.request('/v1/mcp/tenant/tokens', { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}` } });
          const { token: mcpToken } = (await token.json()) as { token: string };
          const setup: FuzzSetup = { apiKey: t.apiKey, adminSession, mcpToken };
          // An inbound webhook for the signed-ingestion cases and the idempotency journey, when the route exists.
          const res = await t.app.request('/inbound-webhooks', {
            method: 'POST',
            headers: { cookie: adminSession.cookie, 'x-csrf-token': adminSession.csrfToken, 'content-type': 'application/json' },
            // No template: the default renders any JSON object, so every schema-valid body is ingested (a template that
            // names a missing field is a documented 400 payload_invalid, which the positive check cannot foresee).
            body: JSON.stringify({ slug: 'fuzz-inbound', agentSlug: 'sales', alias: 'Sonata', algorithm: 'sha256', timestampRequired: true }),
          });
          if (res.status === 201 || res.status === 200) {
            const hook = (await res.json()) as { slug: string; secret: string };
            // Timestamps from the app's fake clock, or every delivery falls outside the replay window.
            setup.inbound = { slug: hook.slug, secret: hook.secret, now: () => t.clock.now().getTime() };
            // Scoped to ingestion: fuzzing the webhook's own pause/revoke routes must not disable it.
            setup.parameters = { 'ingestInboundEvent.slug': hook.slug, 'ingestInboundEventV1.slug': hook.slug };
          }
          return setup;
        },
      });
      const report = result.failures.map((f, i) => `${i + 1}. ${f.label} · ${f.check}: ${f.message}\n   ${f.description}\n   ${f.curl}`).join('\n');
      expect(result.cases).toBeGreaterThan(1000);
      expect(result.failures.length, `seed ${result.seed}\n${report}`).toBe(0);
    } finally {
      await t.close();
      await store.cleanup();
    }
  });
});

/** The CI seed unless FUZZ_SEED names another (`random`: a fresh one, printed in the report). */
function fuzzSeed(value: string | undefined): number | undefined {
  if (value === 'random') return undefined;
  return value ? Number(value) : 20_261_122;
}
