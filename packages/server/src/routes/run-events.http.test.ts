/**
 * The run's event log over real HTTP (@hono/node-server on loopback), on each store: the invocation
 * stream's ids are the log's sequences; GET /v1/runs/{run_id}/events replays a finished run and
 * closes, follows a live one, resumes after Last-Event-ID or ?after=N; a client whose stream drops
 * comes back with its last id and gets every later fragment once and the same terminal event; the
 * retention merges a finished run's fragments into one. Another workspace's run is 404.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRunDetail, zRunEvent, zStreamEnd } from '../../../../generated/zod.ts';
import { compactRunLogs } from '../domain/run-events/index.ts';
import { createEngines } from '../engine/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSseWithIds } from '@service/testing/sse';
import { testBackends, type TestStore } from '@service/testing/store';

type RunEvent = ReturnType<typeof zRunEvent.parse>;

describe.each(testBackends())('run events on $name', { timeout: 60_000 }, ({ open }) => {
  let store: TestStore;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let key: string;

  beforeAll(async () => {
    store = await open();
    // Fragments 20 ms apart: a run is still in progress while a test drops and resumes its stream.
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'local', Concerto: 'local' },
      local: { fragmentDelayMs: 20 },
    });
    t = await createTestApp({ db: store.db, deps: { engines, streamResumeMs: 10_000 } });
    key = await t.keyWith('orchestrator:invoke', 'tenant:read');
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.close();
    await store.cleanup();
  });

  const auth = (secret = key) => ({ authorization: `Bearer ${secret}` });

  function invoke(content: string, signal?: AbortSignal) {
    return fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'hr', stream: true, messages: [{ role: 'user', content }] }),
      ...(signal ? { signal } : {}),
    });
  }

  async function events(runId: string, init: { after?: number; lastEventId?: string; secret?: string } = {}): Promise<RunEvent[]> {
    const query = init.after === undefined ? '' : `?after=${init.after}`;
    const headers = { ...auth(init.secret), ...(init.lastEventId === undefined ? {} : { 'last-event-id': init.lastEventId }) };
    const res = await fetch(`${base}/v1/runs/${runId}/events${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The stream closes by itself after the terminal event: text() returns.
    return parseSseWithIds(await res.text()).map((e) => {
      const event = zRunEvent.parse(e.data);
      // `id:` is the sequence and `event:` the type, on every event.
      expect([e.id, e.event]).toEqual([String(event.sequence), event.type]);
      return event;
    });
  }

  async function content(runId: string): Promise<string> {
    const detail = zRunDetail.parse(await (await fetch(`${base}/runs/${runId}`, { headers: auth() })).json());
    expect(detail.run.status).toBe('completed');
    return detail.run.content!;
  }

  const text = (log: readonly RunEvent[]) => log.map((e) => (e.type === 'text.delta' ? e.delta : '')).join('');

  it("replays a finished run's log: created, routed, the stream's fragments with the stream's ids, usage, completed", async () => {
    const res = await invoke('Onboarding plan for a new hire');
    const runId = res.headers.get('x-run-id')!;
    expect(runId).toMatch(/^run_/);
    const stream = parseSseWithIds(await res.text());
    const end = zStreamEnd.parse(stream.at(-1)!.data);
    expect(end.runId).toBe(runId);

    const log = await events(runId);
    expect(log.slice(0, 2)).toMatchObject([
      { sequence: 1, type: 'run.created', runId, agentSlug: 'hr', alias: 'Sonata', source: 'api', conversationId: null },
      { sequence: 2, type: 'run.routed', runId, agentSlug: 'hr' },
    ]);
    const fragments = stream.filter((e) => e.event === 'message').map((e) => ({ sequence: Number(e.id), delta: (e.data as { delta: string }).delta }));
    expect(fragments.length).toBeGreaterThan(3);
    expect(log.filter((e) => e.type === 'text.delta').map((e) => ({ sequence: e.sequence, delta: (e as { delta: string }).delta }))).toEqual(fragments);
    const [usage, completed] = log.slice(-2);
    expect(usage).toMatchObject({ type: 'run.usage', usage: { inputTokens: end.usage.inputTokens, outputTokens: end.usage.outputTokens } });
    expect(completed).toMatchObject({ type: 'run.completed', sequence: usage!.sequence + 1 });
    // The stream's end event carries the terminal event's id.
    expect(stream.at(-1)!.id).toBe(String(completed!.sequence));
    expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => log[0]!.sequence + i));
    expect(text(log)).toBe(await content(runId));

    // After N: only what follows; Last-Event-ID wins over ?after=.
    expect(await events(runId, { after: 4 })).toEqual(log.filter((e) => e.sequence > 4));
    expect(await events(runId, { after: 1, lastEventId: String(completed!.sequence - 1) })).toEqual([completed]);
    expect(await events(runId, { after: completed!.sequence })).toEqual([]);
  });

  it("replays a synchronous run's answer as its one fragment, read from the run's row: no event log row is written for it", async () => {
    const res = await fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'hr', messages: [{ role: 'user', content: 'Parental leave policy summary' }] }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { runId: string; content: string };
    expect(answer.content).not.toBe('');
    expect(await store.db.query(`SELECT run_id FROM run_events WHERE run_id = $1`, [answer.runId])).toEqual([]);

    const [row] = await store.db.query<{ completed_at: Date }>(`SELECT completed_at FROM runs WHERE id = $1`, [answer.runId]);
    const log = await events(answer.runId);
    expect(log.map((e) => [e.sequence, e.type])).toEqual([
      [1, 'run.created'],
      [2, 'run.routed'],
      [3, 'text.delta'],
      [4, 'run.usage'],
      [5, 'run.completed'],
    ]);
    expect(log[2]).toEqual({ sequence: 3, type: 'text.delta', runId: answer.runId, at: row!.completed_at.toISOString(), delta: answer.content });
    expect(await events(answer.runId, { after: 3 })).toEqual(log.slice(3));
  });

  it('a client whose stream drops comes back with Last-Event-ID: every later fragment once, the same terminal, the same text', async () => {
    const controller = new AbortController();
    const res = await invoke('Quarterly hiring plan with interview loops and onboarding', controller.signal);
    const runId = res.headers.get('x-run-id')!;
    // Read two fragments, then drop the connection.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    while (parseSseWithIds(raw.slice(0, raw.lastIndexOf('\n\n') + 2)).length < 2) raw += decoder.decode((await reader.read()).value, { stream: true });
    controller.abort();
    await reader.cancel().catch(() => {});
    const before = parseSseWithIds(raw.slice(0, raw.lastIndexOf('\n\n') + 2));
    const lastId = before.at(-1)!.id!;

    const rest = await events(runId, { lastEventId: lastId });
    expect(rest[0]!.sequence).toBe(Number(lastId) + 1);
    // Each sequence once, in order, up to the terminal event, which is the run's.
    expect(rest.map((e) => e.sequence)).toEqual(rest.map((_, i) => Number(lastId) + 1 + i));
    expect(rest.at(-1)).toMatchObject({ type: 'run.completed', runId });
    const received = before.map((e) => (e.data as { delta: string }).delta).join('') + text(rest);
    expect(received).toBe(await content(runId));
    // The whole log, read afterwards, is the same: what the first stream sent, then what the resumed one did.
    const whole = await events(runId);
    expect(whole.filter((e) => e.sequence > Number(lastId))).toEqual(rest);
  });

  it('follows a live run from the start until its terminal event', async () => {
    const res = await invoke('Training budget overview [[fail-mid-stream]]');
    const runId = res.headers.get('x-run-id')!;
    const [log, stream] = await Promise.all([events(runId), res.text()]);
    expect(log[0]).toMatchObject({ sequence: 1, type: 'run.created' });
    expect(log.at(-1)).toMatchObject({ type: 'run.failed', reason: 'engine_error', error: 'engine_error' });
    const error = parseSseWithIds(stream).at(-1)!;
    expect(error).toMatchObject({ event: 'error', id: String(log.at(-1)!.sequence), data: { error: 'engine_error', runId } });
    expect(log.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(0);
  });

  it("the retention merges a finished run's fragments into one; the text and the terminal event stay", async () => {
    const res = await invoke('Benefits summary for new staff');
    const runId = res.headers.get('x-run-id')!;
    await res.text();
    const log = await events(runId);
    const fragments = log.filter((e) => e.type === 'text.delta');
    expect(fragments.length).toBeGreaterThan(1);
    // Everything written before an hour from now is past a retention of zero.
    expect(await compactRunLogs(t.db, new Date(t.clock.now().getTime() + 3_600_000), t.clock.now(), 1_000)).toBeGreaterThan(0);
    const compacted = await events(runId);
    expect(compacted.filter((e) => e.type === 'text.delta')).toEqual([{ ...fragments[0], delta: text(log) }]);
    expect(compacted.filter((e) => e.type !== 'text.delta')).toEqual(log.filter((e) => e.type !== 'text.delta'));
  });

  it("another workspace's run is 404 not_found; a Last-Event-ID that is not 1 to 10 digits is 400", async () => {
    const res = await invoke('Holiday policy');
    const runId = res.headers.get('x-run-id')!;
    await res.text();
    const other = await createTestApp({ db: store.db });
    const otherKey = await other.keyWith('orchestrator:invoke', 'tenant:read');
    const foreign = await fetch(`${base}/v1/runs/${runId}/events`, { headers: auth(otherKey) });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ error: 'not_found' });
    const bad = await fetch(`${base}/v1/runs/${runId}/events`, { headers: { ...auth(), 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_request' });
    const tooLong = await fetch(`${base}/runs/${runId}/events`, { headers: { ...auth(), 'last-event-id': '12345678901' } });
    expect(tooLong.status).toBe(400);
    // Past the log's end: nothing more, and the stream of a finished run closes.
    expect(await events(runId, { lastEventId: '9999999999' })).toEqual([]);
  });
});
