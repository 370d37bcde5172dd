/**
 * @module A workspace filled through the real API (no SQL) with what every screen of the panel shows: keys, outbound
 * destinations with deliveries, an inbound webhook, a paused agent, runs (one with a tool call, one asking for an
 * approval), a member, a pending invitation and a reset link. The texts it stores are given: ordinary ones for the
 * screenshots, or markup (`<img onerror>`, `<script>`, `"><svg onload>`) to prove that the panel shows it as text.
 */
import type { Harness, User } from './harness.ts';
import { codeOf } from './harness.ts';

/** Markup that runs if a screen ever hands a stored string to the HTML parser: each piece sets `window.__xss`. */
export const MARKUP = `<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>"><svg onload=window.__xss=1>`;

/** The strings a workspace stores and its screens show (each at most 100 characters, the shortest limit). */
export interface Texts {
  workspace: string;
  key: string;
  newKey: string;
  agentReason: string;
  killSwitchReason: string;
  /** The request of a finished run on the local engine (which quotes it in its answer and its tool call). */
  request: string;
  /** Typed into Try an agent, and what the engine behind `tryAlias` answers to it. */
  tryMessage: string;
  tryAlias: 'Sonata' | 'Symphony';
  answer: string;
}

export const BENIGN: Texts = {
  workspace: 'Northwind Traders',
  key: 'Reporting dashboard',
  newKey: 'CRM integration',
  agentReason: 'Month-end close',
  killSwitchReason: 'Incident drill',
  request: 'Which invoices are more than 60 days overdue?',
  tryMessage: 'Which invoices are more than 60 days overdue?',
  tryAlias: 'Sonata',
  answer: '',
};

/** Each field its own tag, so that a screen showing one string for another is caught. */
export const HOSTILE: Texts = {
  workspace: `W ${MARKUP}`,
  key: `K ${MARKUP}`,
  newKey: `N ${MARKUP}`,
  agentReason: `A ${MARKUP}`,
  killSwitchReason: `S ${MARKUP}`,
  request: `R ${MARKUP}`,
  tryMessage: `T ${MARKUP}`,
  tryAlias: 'Symphony',
  answer: `E ${MARKUP}`,
};

export interface World {
  texts: Texts;
  owner: User;
  apiKey: string;
  /** The owner's session: its cookie (set into a browser context) and its CSRF token. */
  cookie: string;
  csrfToken: string;
  /** A finished run with a tool call. */
  runId: string;
  invitationLink: string;
  resetLink: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** A new workspace named `texts.workspace`, its owner signed in through the API, and everything its screens show. */
export async function seedWorld(h: Harness, texts: Texts, tag: string): Promise<World> {
  const created = await call(
    h,
    'POST',
    '/operator/workspaces',
    { authorization: `Bearer ${h.operatorToken}` },
    { name: texts.workspace, adminEmail: `owner@${tag}.example` },
    201,
  );
  const { admin: owner, apiKey } = created as { admin: User; apiKey: string };
  const login = await fetch(`${h.url}/auth/login`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ email: owner.email, password: owner.password, totpCode: codeOf(owner) }),
  });
  if (login.status !== 200) throw new Error(`login answered ${login.status}`);
  const cookie = /service_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  const session = { cookie: `service_session=${cookie}`, 'x-csrf-token': csrfToken };
  const asOwner = (method: string, path: string, body?: unknown, status = 200) => call(h, method, path, session, body, status);
  const invoke = (agentSlug: string, content: string) =>
    call(h, 'POST', '/v1/inference', { authorization: `Bearer ${apiKey}` }, { agentSlug, alias: 'Sonata', messages: [{ role: 'user', content }] });

  await asOwner('POST', '/api-keys', { name: texts.key, scopes: ['tenant:read', 'usage:read'], expiresInDays: 90 }, 201);
  for (const receiver of [h.healthy, h.failing]) {
    const destination = (await asOwner(
      'POST',
      '/webhook-destinations',
      { url: `${receiver.origin}/${tag}/events`, events: ['run.completed', 'run.failed'] },
      201,
    )) as {
      id: string;
    };
    await asOwner('POST', `/webhook-destinations/${destination.id}/ping`, undefined, 202);
    await until(async () => {
      const deliveries = (await asOwner('GET', `/webhook-destinations/${destination.id}/deliveries`)) as { data: { attempts: unknown[] }[] };
      return deliveries.data.some((d) => d.attempts.length > 0);
    });
  }
  await asOwner('POST', '/inbound-webhooks', { slug: `${tag}-crm-leads`, agentSlug: 'sales', alias: 'Sonata' }, 201);
  const run = (await invoke('finance', texts.request)) as { runId: string };
  await invoke('strategy', 'Draft the plan for the next quarter.');
  await invoke('sales', 'Please send the follow-up email to Dana about the renewal.');
  await asOwner('POST', '/agents/legal/pause', { reason: texts.agentReason });

  // An email cannot carry markup: the contract's pattern refuses it before anything is stored.
  await asOwner('POST', '/workspace/invitations', { email: `${MARKUP}@example.com`, role: 'member' }, 400);
  const member = (await asOwner('POST', '/workspace/invitations', { email: `dana@${tag}.example`, role: 'member' }, 201)) as { token: string };
  const setup = (await call(h, 'POST', '/invitations/accept', {}, { token: member.token, password: 'dana-chose-a-long-password' }, 202)) as {
    totpSecret: string;
  };
  const totpCode = codeOf({ email: '', password: '', totpSecret: setup.totpSecret });
  await call(h, 'POST', '/invitations/accept', {}, { token: member.token, password: 'dana-chose-a-long-password', totpCode });
  const pending = (await asOwner('POST', '/workspace/invitations', { email: `lee@${tag}.example`, role: 'admin' }, 201)) as { token: string };
  const members = (await asOwner('GET', '/workspace/members')) as { data: { userId: string; email: string }[] };
  const dana = members.data.find((m) => m.email === `dana@${tag}.example`)!;
  const reset = (await asOwner('POST', `/workspace/members/${dana.userId}/reset`, { reset: 'totp' }, 201)) as { token: string };
  return {
    texts,
    owner,
    apiKey,
    cookie,
    csrfToken,
    runId: run.runId,
    invitationLink: `/panel/invitations/${pending.token}`,
    resetLink: `/panel/account-resets/${reset.token}`,
  };
}

async function call(h: Harness, method: string, path: string, headers: Record<string, string>, body: unknown, status = 200): Promise<unknown> {
  const res = await fetch(`${h.url}${path}`, { method, headers: { ...JSON_TYPE, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status} (expected ${status}): ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function until(done: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 150; tries += 1) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the seeded state did not come about in 15 s');
}
