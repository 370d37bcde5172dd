/**
 * The workspace's drafts over real HTTP (the app on a loopback port): any member lists them newest
 * first, a page at a time, by run and by agent, and reads one; another workspace's draft, or none, is
 * `404 not_found`. Drafts are written by real runs (the local engine drafts what a request asks for).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zDraft, zDraftList } from '../../../../generated/zod.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { httpCaller, memberSession, type Session } from '@service/testing/panel-sessions';

describe.each(testBackends())('drafts on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let admin: Session;
  let member: Session;
  let call: ReturnType<typeof httpCaller>;
  /** The runs, oldest first: sales (an email), marketing (a proposal), sales (an email). */
  const runs: { runId: string; agent: string }[] = [];

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    call = httpCaller(base);
    admin = await t.login();
    member = await memberSession(t, admin);
    for (const [agent, content] of [
      ['sales', 'Write an email to the new lead about our pricing'],
      ['marketing', 'Write a proposal for the spring campaign'],
      ['sales', 'Draft an email to Dana about the renewal'],
    ] as const) {
      t.clock.advance(1_000); // one second apart: the order is defined
      runs.push({ runId: await invoke(t.apiKey, agent, content), agent });
    }
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await t?.close();
    await store?.cleanup();
  });

  async function invoke(apiKey: string, agentSlug: string, content: string): Promise<string> {
    const res = await fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug, messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { runId: string }).runId;
  }

  it('any member lists them newest first, with kind, subject, body, agent, run and time', async () => {
    const res = await call(member, 'GET', '/drafts');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const page = zDraftList.parse(res.body);
    expect(page).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(page.data.map((d) => d.runId)).toEqual([runs[2]!.runId, runs[1]!.runId, runs[0]!.runId]);
    expect(page.data.map((d) => d.agentSlug)).toEqual(['sales', 'marketing', 'sales']);
    expect(page.data[1]).toMatchObject({ kind: 'proposal', agentSlug: 'marketing' });
    expect(page.data[0]).toMatchObject({ kind: 'email', subject: expect.any(String), body: expect.any(String) });
    expect(page.data[0]!.body.length).toBeGreaterThan(0);
    expect(Date.parse(page.data[0]!.createdAt)).toBeGreaterThan(Date.parse(page.data[2]!.createdAt));
  });

  it('pages with limit and offset; total counts every match', async () => {
    const all = zDraftList.parse((await call(member, 'GET', '/drafts')).body).data.map((d) => d.id);
    const first = zDraftList.parse((await call(member, 'GET', '/drafts?limit=2')).body);
    expect(first).toMatchObject({ total: 3, limit: 2, offset: 0 });
    const second = zDraftList.parse((await call(member, 'GET', '/drafts?limit=2&offset=2')).body);
    expect(second).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect([...first.data, ...second.data].map((d) => d.id)).toEqual(all);
    const past = zDraftList.parse((await call(member, 'GET', '/drafts?limit=2&offset=10')).body);
    expect(past).toMatchObject({ data: [], total: 3, offset: 10 });
  });

  it('filters by run and by agent, combined', async () => {
    const byRun = zDraftList.parse((await call(member, 'GET', `/drafts?run_id=${runs[1]!.runId}`)).body);
    expect(byRun.total).toBe(1);
    expect(byRun.data[0]).toMatchObject({ runId: runs[1]!.runId, agentSlug: 'marketing' });
    const byAgent = zDraftList.parse((await call(member, 'GET', '/drafts?agent_slug=sales')).body);
    expect(byAgent.data.map((d) => d.runId)).toEqual([runs[2]!.runId, runs[0]!.runId]);
    const none = zDraftList.parse((await call(member, 'GET', `/drafts?run_id=${runs[1]!.runId}&agent_slug=sales`)).body);
    expect(none).toMatchObject({ data: [], total: 0 });
    const bad = await call(member, 'GET', '/drafts?run_id=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
  });

  it('any member reads one; a made-up id is 404 not_found', async () => {
    const listed = zDraftList.parse((await call(member, 'GET', '/drafts')).body).data[1]!;
    const res = await call(member, 'GET', `/drafts/${listed.id}`);
    expect(res.status).toBe(200);
    expect(zDraft.parse(res.body)).toEqual(listed);
    const missing = await call(member, 'GET', '/drafts/drf_0000000000000000AAAA');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'not_found' });
    const malformed = await call(member, 'GET', '/drafts/nope');
    expect(malformed.status).toBe(400);
  });

  it("another workspace's drafts are neither listed nor read: 404 as for a made-up id", async () => {
    const other = await createTestApp({ db: store.db });
    try {
      const otherRun = await invoke(other.apiKey, 'sales', 'Write an email to the board');
      const otherAdmin = await other.login();
      const theirs = zDraftList.parse((await call(otherAdmin, 'GET', '/drafts')).body);
      expect(theirs.data.map((d) => d.runId)).toEqual([otherRun]);
      const ours = zDraftList.parse((await call(admin, 'GET', '/drafts')).body);
      expect(ours.data.map((d) => d.runId)).not.toContain(otherRun);
      const foreign = await call(admin, 'GET', `/drafts/${theirs.data[0]!.id}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ error: 'not_found', message: 'Draft not found.' });
      // Filtering by the other workspace's run finds nothing either.
      expect(zDraftList.parse((await call(admin, 'GET', `/drafts?run_id=${otherRun}`)).body).total).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('needs a session', async () => {
    expect((await call(undefined, 'GET', '/drafts')).status).toBe(401);
    const withKey = await call(undefined, 'GET', '/drafts', undefined, { authorization: `Bearer ${t.apiKey}` });
    expect(withKey.status).toBe(401);
    expect(withKey.body.error).toBe('not_authenticated');
  });
});
