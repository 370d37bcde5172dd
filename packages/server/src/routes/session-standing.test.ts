/**
 * What an owner's session may still do in a workspace that is suspended (`403 tenant_forbidden`) or whose
 * payment is pending (`402 payment_not_completed`), table-driven over every session write of the contract,
 * so that a new one is refused unless the decision below (and the contract's `x-standing-exempt`) says
 * otherwise. Reads stay open; the writes that stop, revoke or leave stay open; every write that creates or
 * extends credentials, integrations, members or spending is refused before its handler runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../../../generated/routes.ts';
import { updateWorkspace } from '../domain/workspaces/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';

/** The session writes a workspace in bad standing still allows: sign out or switch, and stop, revoke or remove. */
const ALLOWED = new Set([
  'logout',
  'selectWorkspace',
  'cancelRun',
  'revokeApiKey',
  'revokeApiKeyV1',
  'revokeInboundWebhook',
  'pauseInboundWebhook',
  'pauseWebhookDestination',
  'pauseIntegration',
  'removeIntegration',
  'pauseAgent',
  'setManualKillSwitch',
  'removeMember',
  'revokeInvitation',
]);

const SAFE = new Set(['get', 'head', 'options']);
const sessionWrites = routes.filter((r) => !SAFE.has(r.method) && r.security.some((s) => s.scheme === 'adminSession'));
const reads = ['/usage/current', '/v1/usage', '/usage/daily', '/runs', '/v1/runs', '/api-keys', '/kill-switches', '/workspace/members', '/approvals'];

let t: TestApp;
let session: { cookie: string; csrfToken: string };

beforeAll(async () => {
  t = await createTestApp();
  session = await t.login();
});
afterAll(async () => {
  await t?.close();
});

function call(route: (typeof routes)[number]) {
  // Placeholder ids: a refusal comes before validation and lookup; an allowed write answers 4xx on them.
  const path = route.path.replace(/\{[^}]+\}/g, 'key_AAAAAAAAAAAAAAAAAAAA');
  return t.app.request(path, {
    method: route.method.toUpperCase(),
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
    body: '{}',
  });
}

describe.each([
  { standing: 'suspended', column: 'status', value: 'suspended', status: 403, error: 'tenant_forbidden' },
  // The operator API only records a payment; a pending one is how `workspaces create --pending-payment` starts.
  { standing: 'payment pending', column: 'payment', value: 'pending', status: 402, error: 'payment_not_completed' },
])('a $standing workspace', ({ column, value, status, error }) => {
  beforeAll(async () => {
    await t.db.query(`UPDATE workspaces SET ${column === 'status' ? 'status' : 'payment'} = $2 WHERE id = $1`, [t.workspaceId, value]);
  });
  afterAll(async () => {
    await updateWorkspace(t.db, t.clock, t.workspaceId, { status: 'active', payment: 'completed' });
  });

  // Logout would end the session the table uses: it is the last test.
  const table = sessionWrites.filter((r) => r.operationId !== 'logout').map((r) => ({ operationId: r.operationId, route: r }));
  it.each(table)('$operationId', async ({ operationId, route }) => {
    const res = await call(route);
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    if (ALLOWED.has(operationId)) {
      expect(body.error, `${operationId} answered ${res.status}`).not.toBe(error);
      expect(res.status).not.toBe(status);
    } else {
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(body.error).toBe(error);
      // The refusal is documented on the operation.
      expect(Object.keys(route.responses)).toContain(String(status));
    }
  });

  it('every read still answers 200', async () => {
    for (const path of reads) {
      const res = await t.app.request(path, { headers: { cookie: session.cookie } });
      expect(res.status, path).toBe(200);
    }
  });
});

it('the contract marks exactly the allowed writes x-standing-exempt', () => {
  const exempt = sessionWrites.filter((r) => r.policy.standingExempt).map((r) => r.operationId);
  expect(new Set(exempt)).toEqual(ALLOWED);
});

it('logout is the last test: allowed in a suspended workspace', async () => {
  await updateWorkspace(t.db, t.clock, t.workspaceId, { status: 'suspended' });
  const res = await t.app.request('/auth/logout', { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken } });
  expect(res.status).toBe(204);
});
