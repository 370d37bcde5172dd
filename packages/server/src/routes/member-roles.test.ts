/**
 * The order of roles (member < admin < owner) over the API, table-driven: every actor role × target
 * (self, an owner, an admin, a member) × action (make owner, make admin, make member, remove), and every
 * actor role × invited role. Only an owner grants or removes `owner` or changes another owner; an admin
 * manages admins and members; nobody raises their own role; a refusal is `403 role_forbidden` and changes
 * nothing. Also an admin's take-over of the workspace, step by step: an admin cannot make itself owner, invite an owner,
 * demote or remove the owner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableRow } from '../../../../generated/db.ts';
import { zInvitation, zInvitationAccepted, zMemberList } from '../../../../generated/zod.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { completeTwoStep } from '@service/testing/two-step';

type Role = 'owner' | 'admin' | 'member';
interface Person {
  userId: string;
  email: string;
  password: string;
  totpSecret: string;
}
interface Session {
  cookie: string;
  csrfToken: string;
}

const PASSWORD = 'a password of the new member';
let t: TestApp;
/** The cast: two of each role; the first of each is the actor of its role. */
const people = {} as Record<'owner' | 'owner2' | 'admin' | 'admin2' | 'member' | 'member2', Person>;
const sessions = {} as Record<Role, Session>;
let original: TableRow<'memberships'>[] = [];

function as(session: Session, method: string, path: string, body?: unknown) {
  return t.app.request(path, {
    method,
    headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-csrf-token': session.csrfToken },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function login(person: Person): Promise<Session> {
  t.clock.advance(30_000);
  const res = await t.app.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: person.email, password: person.password, totpCode: totpCode(person.totpSecret, t.clock.now()) }),
  });
  expect(res.status).toBe(200);
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken };
}

/** The workspace's roles as stored (the actor's session may no longer read them after a case). */
async function roles(): Promise<Record<string, Role>> {
  const rows = await t.db.query<Pick<TableRow<'memberships'>, 'user_id' | 'role'>>(`SELECT user_id, role FROM memberships WHERE workspace_id = $1`, [
    t.workspaceId,
  ]);
  return Object.fromEntries(rows.map((row) => [row.user_id, row.role as Role]));
}

/** Back to the cast's roles (written directly: the API under test cannot be trusted to restore it). */
async function reset() {
  await t.db.transaction(async (tx) => {
    await tx.query(`DELETE FROM memberships WHERE workspace_id = $1`, [t.workspaceId]);
    for (const row of original) {
      await tx.query(`INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)`, [
        row.workspace_id,
        row.user_id,
        row.role,
        row.created_at,
      ]);
    }
  });
}

beforeAll(async () => {
  t = await createTestApp();
  people.owner = { userId: '', email: t.admin.email, password: t.admin.password, totpSecret: t.admin.totpSecret };
  const first = await t.login();
  for (const [name, role] of [
    ['owner2', 'owner'],
    ['admin', 'admin'],
    ['admin2', 'admin'],
    ['member', 'member'],
    ['member2', 'member'],
  ] as const) {
    const invitation = zInvitation.parse(await (await as(first, 'POST', '/workspace/invitations', { email: `${name}@northwind.example`, role })).json());
    const accept = (body: Record<string, unknown>) =>
      t.app.request('/invitations/accept', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const res = await completeTwoStep(accept, t.clock, { token: invitation.token, password: PASSWORD });
    const accepted = zInvitationAccepted.parse(await res.json());
    people[name] = { userId: '', email: accepted.email, password: PASSWORD, totpSecret: accepted.totpSecret! };
  }
  const list = zMemberList.parse(await (await as(first, 'GET', '/workspace/members')).json());
  for (const person of Object.values(people)) person.userId = list.data.find((m) => m.email === person.email)!.userId;
  original = await t.db.query<TableRow<'memberships'>>(`SELECT * FROM memberships WHERE workspace_id = $1`, [t.workspaceId]);
  for (const role of ['owner', 'admin', 'member'] as const) sessions[role] = await login(people[role]);
});
afterAll(async () => {
  await t?.close();
});

type Target = 'self' | 'owner' | 'admin' | 'member';
type Action = 'make owner' | 'make admin' | 'make member' | 'remove';
const ok = (action: Action) => (action === 'remove' ? 204 : 200);
const ALL: Action[] = ['make owner', 'make admin', 'make member', 'remove'];

/** What each actor may do to each target: the expected status, 403 role_forbidden otherwise. */
function expected(actor: Role, target: Target, action: Action): number {
  if (actor === 'member') return 403;
  if (actor === 'owner') return ok(action);
  // An admin: nothing on an owner, never the owner role, and itself only downwards (or out).
  if (target === 'owner' || action === 'make owner') return 403;
  return ok(action);
}

const targetOf = (actor: Role, target: Target): Person => (target === 'self' ? people[actor] : people[`${target}2`]);
const cases = (['owner', 'admin', 'member'] as const).flatMap((actor) =>
  (['self', 'owner', 'admin', 'member'] as const).flatMap((target) => ALL.map((action) => ({ actor, target, action }))),
);

describe('the order of roles: actor × target × action', () => {
  it.each(cases)('$actor → $target: $action', async ({ actor, target, action }) => {
    await reset();
    const person = targetOf(actor, target);
    const before = await roles();
    const path = `/workspace/members/${person.userId}`;
    const res =
      action === 'remove' ? await as(sessions[actor], 'DELETE', path) : await as(sessions[actor], 'PATCH', path, { role: action.replace('make ', '') });
    const status = expected(actor, target, action);
    expect(res.status, await res.clone().text()).toBe(status);
    const after = await roles();
    if (status === 403) {
      expect(await res.json()).toMatchObject({ error: 'role_forbidden' });
      expect(after).toEqual(before);
    } else if (action === 'remove') {
      expect(after[person.userId]).toBeUndefined();
      // A session removed from the workspace must sign in again for the next case.
      if (target === 'self') sessions[actor] = await reinstated(actor);
    } else {
      expect(after[person.userId]).toBe(action.replace('make ', ''));
    }
  });

  it.each((['owner', 'admin', 'member'] as const).flatMap((actor) => (['owner', 'admin', 'member'] as const).map((role) => ({ actor, role }))))(
    '$actor invites a $role',
    async ({ actor, role }) => {
      await reset();
      const res = await as(sessions[actor], 'POST', '/workspace/invitations', { email: `${actor}-invites-${role}@northwind.example`, role });
      const status = actor === 'member' || (actor === 'admin' && role === 'owner') ? 403 : 201;
      expect(res.status, await res.clone().text()).toBe(status);
      if (status === 403) expect(await res.json()).toMatchObject({ error: 'role_forbidden' });
    },
  );
});

/** The actor back in the workspace (reset) and signed in again. */
async function reinstated(actor: Role): Promise<Session> {
  await reset();
  return login(people[actor]);
}

describe('an admin cannot take the workspace from its owner', () => {
  it('makes itself owner, invites an owner, demotes and removes the owner: each 403 role_forbidden, nothing changes', async () => {
    await reset();
    const before = await roles();
    const admin = sessions.admin;
    const steps = [
      await as(admin, 'PATCH', `/workspace/members/${people.admin.userId}`, { role: 'owner' }),
      await as(admin, 'POST', '/workspace/invitations', { email: 'accomplice@example.com', role: 'owner' }),
      await as(admin, 'PATCH', `/workspace/members/${people.owner.userId}`, { role: 'member' }),
      await as(admin, 'DELETE', `/workspace/members/${people.owner.userId}`),
    ];
    for (const res of steps) {
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'role_forbidden' });
    }
    expect(await roles()).toEqual(before);
  });

  it('a member raised to admin by an admin still cannot raise itself further', async () => {
    await reset();
    const raised = await as(sessions.admin, 'PATCH', `/workspace/members/${people.member.userId}`, { role: 'admin' });
    expect(raised.status).toBe(200);
    const self = await as(sessions.member, 'PATCH', `/workspace/members/${people.member.userId}`, { role: 'owner' });
    expect(self.status).toBe(403);
    expect(await self.json()).toMatchObject({ error: 'role_forbidden', message: 'Nobody may raise their own role.' });
  });
});
