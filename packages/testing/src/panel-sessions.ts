/**
 * @module Test helper for the panel's routes: a session of a plain `member` of the test app's
 * workspace (invited by its admin, accepted with a new account, signed in with two-step verification),
 * and a caller that sends a session's cookie and CSRF token.
 */
import { expect } from 'vitest';
import { totpCode } from '../../server/src/domain/sessions/totp.ts';
import { randomBase62 } from '../../server/src/random.ts';
import type { TestApp } from './app.ts';

export interface Session {
  cookie: string;
  csrfToken: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** Calls the app as the session (cookie and X-CSRF-Token), or with no credential. */
export function caller(t: TestApp) {
  return sessionCaller((path, init) => t.app.request(path, init));
}

/** The same caller over real HTTP, to a server listening at `base` (`http://127.0.0.1:<port>`). */
export function httpCaller(base: string) {
  return sessionCaller((path, init) => fetch(`${base}${path}`, init));
}

function sessionCaller(request: (path: string, init: RequestInit) => Response | Promise<Response>) {
  return async function call(
    session: Session | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const res = await request(path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: res.status, headers: res.headers, body: await res.text() };
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
}

/** A new member of the workspace (role `member`), signed in. */
export async function memberSession(t: TestApp, admin: Session): Promise<Session & { userId: string }> {
  const call = caller(t);
  const email = `member-${randomBase62(8).toLowerCase()}@example.com`;
  const password = 'a password of the panel member';
  const invited = await call(admin, 'POST', '/workspace/invitations', { email, role: 'member' });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const setup = await call(undefined, 'POST', '/invitations/accept', { token: invited.body.token, password });
  expect(setup.status, JSON.stringify(setup.body)).toBe(202);
  const totpCodeNow = totpCode(setup.body.totpSecret, t.clock.now());
  const accepted = await call(undefined, 'POST', '/invitations/accept', { token: invited.body.token, password, totpCode: totpCodeNow });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  t.clock.advance(30_000);
  const res = await t.app.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, totpCode: totpCode(accepted.body.totpSecret, t.clock.now()) }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string; user: { id: string } };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: body.csrfToken, userId: body.user.id };
}
