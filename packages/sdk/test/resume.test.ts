/**
 * @module Resuming dropped streams, against the real server over HTTP, through a loopback TCP proxy that cuts the
 * SDK's connection after a number of bytes of an answer (test/support/cutting-proxy.ts): an invocation stream cut
 * anywhere gives the caller the uncut stream (the same fragments, each once, the same end or error), `runs.events`
 * replays a finished run's log and follows a live one, resumes a cut log without repeating an event, and a server that
 * keeps cutting ends in `StreamInterruptedError` after `maxRetries` attempts. The server paces the local engine's
 * fragments (LOCAL_ENGINE_FRAGMENT_DELAY_MS) so that a resume usually reaches a run still in progress.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InternalServerError,
  PermissionError,
  type RunEvent,
  ServiceClient,
  type ServiceError,
  StreamInterruptedError,
  type StreamEvent,
} from '../src/index.ts';
import { type CuttingProxy, type SeenRequest, startCuttingProxy } from './support/cutting-proxy.ts';
import { type LiveServer, startLiveServer } from './support/live-server.ts';
import { type LoopbackProxy, startLoopbackProxy } from './support/loopback-proxy.ts';

const ask = (content: string) => ({ alias: 'Sonata' as const, messages: [{ role: 'user' as const, content }] });
const INVOCATION = /^POST \/v1\/inference /;
const EVENTS = /^GET \/v1\/runs\/[^/]+\/events /;

let live: LiveServer;
let proxy: CuttingProxy;
/** Straight to the server. */
let direct: ServiceClient;
/** Through the cutting proxy. */
let cut: ServiceClient;

/** Each request from its own client address (the server trusts one proxy), as in sdk.test.ts: the per-IP limit. */
let address = 0;
const net: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  address += 1;
  headers.set('x-forwarded-for', `10.78.${(address >> 8) & 255}.${address & 255}`);
  return fetch(input, { ...init, headers });
};

interface Outcome {
  deltas: string[];
  end?: Extract<StreamEvent, { type: 'end' }>;
  error?: unknown;
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<Outcome> {
  const outcome: Outcome = { deltas: [] };
  try {
    for await (const event of stream) {
      if (event.type === 'delta') outcome.deltas.push(event.delta);
      else outcome.end = event;
    }
  } catch (error) {
    outcome.error = error;
  }
  return outcome;
}

async function allEvents(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const list: RunEvent[] = [];
  for await (const event of events) list.push(event);
  return list;
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const requests = (pattern: RegExp): SeenRequest[] => proxy.seen.filter((r) => pattern.test(`${r.line} `));

beforeAll(async () => {
  live = await startLiveServer({ port: 0, env: { TRUST_PROXY: '1', LOCAL_ENGINE_FRAGMENT_DELAY_MS: '15' } });
  proxy = await startCuttingProxy(live.url);
  direct = new ServiceClient({ apiKey: live.init.apiKey, baseURL: live.url, fetch: net });
  cut = new ServiceClient({ apiKey: live.init.apiKey, baseURL: proxy.url, fetch: net, maxRetries: 2 });
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await live?.dispose();
});

describe('an invocation stream that drops', () => {
  const question = 'Summarise the sales pipeline by stage, with the risks of each.';
  let uncut: Outcome;
  let bodyBytes = 0;

  beforeAll(async () => {
    proxy.cut();
    uncut = await collect(cut.inference.stream(ask(question)));
    bodyBytes = requests(INVOCATION)[0]!.bodyBytes;
  });

  it('is uncut through the proxy when no rule cuts it (the reference)', () => {
    expect(uncut.error).toBeUndefined();
    expect(uncut.deltas.length).toBeGreaterThan(5);
    expect(uncut.end?.usage.outputTokens).toBeGreaterThan(0);
    expect(requests(INVOCATION)[0]!.cut).toBe(false);
    expect(requests(EVENTS)).toHaveLength(0);
  });

  // Where the cut falls: before the first fragment, inside the first one, in the middle, inside the end event.
  it.each([
    ['right after the headers', () => 0, false],
    ['inside the first fragment', () => 12, false],
    ['after a third of the answer', () => Math.floor(bodyBytes / 3), true],
    ['after two thirds of the answer', () => Math.floor((2 * bodyBytes) / 3), true],
    ['inside the end event', () => bodyBytes - 12, true],
  ])('cut %s: resumes from the run events with the same fragments, each once, and the same end', async (_, at, lastEventIdSent) => {
    proxy.cut({ match: INVOCATION, afterBytes: at(), times: 1 });
    const resumed = await collect(cut.inference.stream(ask(question)));
    expect(resumed.error).toBeUndefined();
    expect(requests(INVOCATION)[0]!.cut).toBe(true);
    expect(resumed.deltas).toEqual(uncut.deltas);
    expect(resumed.deltas.join('')).toBe(uncut.deltas.join(''));
    expect(resumed.end?.usage).toEqual(uncut.end!.usage);
    expect(resumed.end?.runId).toMatch(/^run_/);
    expect(resumed.end?.runId).not.toBe(uncut.end!.runId);
    // One resume, from the run of this invocation, after the last fragment received.
    const resumes = requests(EVENTS);
    expect(resumes).toHaveLength(1);
    expect(resumes[0]!.line).toBe(`GET /v1/runs/${resumed.end!.runId}/events`);
    if (lastEventIdSent) expect(Number(resumes[0]!.headers['last-event-id'])).toBeGreaterThan(0);
    else expect(resumes[0]!.headers['last-event-id']).toBeUndefined();
    const detail = await direct.runs.retrieve(resumed.end!.runId);
    expect(detail.run.status).toBe('completed');
    expect(detail.run.content).toBe(uncut.deltas.join(''));
  });

  it('cut so that the server sees its client go: the run goes on for a reader (STREAM_RESUME_MS), and the resume gets the uncut rest', async () => {
    proxy.cut({ match: INVOCATION, afterBytes: Math.floor(bodyBytes / 3), times: 1, closeServerSide: true });
    const resumed = await collect(cut.inference.stream(ask(question)));
    expect(requests(INVOCATION)[0]!.cut).toBe(true);
    const [resume] = requests(EVENTS);
    const runId = /\/v1\/runs\/([^/]+)\/events/.exec(resume!.line)![1]!;
    expect(Number(resume!.headers['last-event-id'])).toBeGreaterThan(0);
    expect(resumed.error).toBeUndefined();
    expect(resumed.deltas).toEqual(uncut.deltas);
    expect(resumed.end).toEqual({ type: 'end', runId, usage: uncut.end!.usage });
    const logged = await allEvents(direct.runs.events(runId));
    expect(logged.at(-1)?.type).toBe('run.completed');
    expect(textOf(logged)).toBe(uncut.deltas.join(''));
  });

  it('stalled (open but silent) past the request timeout: taken for dropped, resumed from the run events', async () => {
    proxy.cut({ match: INVOCATION, afterBytes: Math.floor(bodyBytes / 3), times: 1, stall: true });
    // The timeout also bounds the invocation's headers, each gap between fragments before the stall and the resume: on
    // 2 busy cores 1.5 s was near what those can take, and one that ran out would retry or resume once more.
    const patient = new ServiceClient({ apiKey: live.init.apiKey, baseURL: proxy.url, fetch: net, maxRetries: 2, timeoutMs: 5_000 });
    const resumed = await collect(patient.inference.stream(ask(question)));
    expect(requests(INVOCATION)[0]!.cut).toBe(true);
    expect(resumed.error).toBeUndefined();
    expect(resumed.deltas).toEqual(uncut.deltas);
    expect(resumed.end?.usage).toEqual(uncut.end!.usage);
    const resumes = requests(EVENTS);
    expect(resumes).toHaveLength(1);
    expect(Number(resumes[0]!.headers['last-event-id'])).toBeGreaterThan(0);
  });

  it('of agents.messageStream and orchestrator.messageStream resumes the same way', async () => {
    const body = ask('Draft a short intro to Dana.');
    for (const [route, stream] of [
      [/^POST \/v1\/agents\/sales\/messages /, () => cut.agents.messageStream('sales', body)],
      [/^POST \/v1\/orchestrator\/messages /, () => cut.orchestrator.messageStream(body)],
    ] as const) {
      proxy.cut();
      const reference = await collect(stream());
      const size = requests(route)[0]!.bodyBytes;
      proxy.cut({ match: route, afterBytes: Math.floor(size / 2), times: 1 });
      const resumed = await collect(stream());
      expect(requests(route)[0]!.cut).toBe(true);
      expect(requests(EVENTS)).toHaveLength(1);
      expect(resumed.error).toBeUndefined();
      expect(resumed.deltas.length).toBeGreaterThan(1);
      expect(resumed.deltas).toEqual(reference.deltas);
      expect(resumed.end?.usage).toEqual(reference.end!.usage);
    }
  });

  it('of a run that fails mid-way throws the same error as the uncut stream, after the same fragments', async () => {
    const failing = ask('Write a long report on churn [[fail-mid-stream]]');
    proxy.cut();
    const reference = await collect(cut.inference.stream(failing));
    expect(reference.error).toBeInstanceOf(InternalServerError);
    const half = Math.floor(requests(INVOCATION)[0]!.bodyBytes / 2);

    proxy.cut({ match: INVOCATION, afterBytes: half, times: 1 });
    const resumed = await collect(cut.inference.stream(failing));
    expect(requests(INVOCATION)[0]!.cut).toBe(true);
    expect(requests(EVENTS)).toHaveLength(1);
    expect(resumed.deltas).toEqual(reference.deltas);
    expect(resumed.end).toBeUndefined();
    expect(resumed.error).toBeInstanceOf(InternalServerError);
    const [was, is] = [reference.error as ServiceError, resumed.error as ServiceError];
    expect({ status: is.status, code: is.code, message: is.message }).toEqual({ status: was.status, code: was.code, message: was.message });
    expect(is.code).toBe('engine_error');
    expect(is.runId).toMatch(/^run_/);
    expect(is.runId).not.toBe(was.runId);
    expect((await direct.runs.retrieve(is.runId!)).run.status).toBe('failed');
  });

  it('of a run canceled while the SDK resumes ends with the end event and the usage billed, as the uncut stream does', async () => {
    // [[hang]]: one fragment, then the engine waits until the run is canceled.
    proxy.cut({ match: INVOCATION, afterBytes: 0, times: 1 });
    const outcome = collect(cut.inference.stream(ask('Keep talking about the roadmap [[hang]]')));
    await until(() => requests(EVENTS).length > 0, 'the resume');
    const runId = /\/v1\/runs\/([^/]+)\/events/.exec(requests(EVENTS)[0]!.line)![1]!;
    expect((await direct.runs.retrieve(runId)).run.status).toBe('in_progress');
    await direct.runs.cancel(runId);
    const resumed = await outcome;
    expect(resumed.error).toBeUndefined();
    const detail = await direct.runs.retrieve(runId);
    expect(detail.run.status).toBe('canceled');
    expect(resumed.end).toEqual({ type: 'end', runId, usage: { inputTokens: detail.run.usage.inputTokens, outputTokens: detail.run.usage.outputTokens } });
    const logged = await allEvents(direct.runs.events(runId));
    expect(resumed.deltas.join('')).toBe(textOf(logged));
    expect(resumed.deltas.length).toBeGreaterThan(0);
  });

  it('gives up after maxRetries resumes when every resume is cut too: StreamInterruptedError with the run and the last event', async () => {
    proxy.cut({ match: INVOCATION, afterBytes: Math.floor(bodyBytes / 2), times: 1 }, { match: EVENTS, afterBytes: 0 });
    const resumed = await collect(cut.inference.stream(ask(question)));
    expect(resumed.end).toBeUndefined();
    expect(resumed.error).toBeInstanceOf(StreamInterruptedError);
    const error = resumed.error as StreamInterruptedError;
    const resumes = requests(EVENTS);
    expect(resumes).toHaveLength(2);
    expect(resumes.every((r) => r.cut)).toBe(true);
    expect(error.runId).toBe(/\/v1\/runs\/([^/]+)\/events/.exec(resumes[0]!.line)![1]);
    expect(error.lastEventId).toBe(Number(resumes[0]!.headers['last-event-id']));
    expect(error.lastEventId).toBeGreaterThan(0);
    expect(error.message).toMatch(/dropped 3 times in a row/);
    // What the caller had is the beginning of the answer; the rest is in the log after lastEventId.
    const rest = await allEvents(direct.runs.events(error.runId, { after: error.lastEventId }));
    expect(resumed.deltas.join('') + textOf(rest)).toBe(uncut.deltas.join(''));
  });
});

describe('a resume answered with an error', () => {
  // SDK → cutting proxy → a proxy that answers canned errors (loopback-proxy.ts) → the server.
  let canned: LoopbackProxy;
  let chained: CuttingProxy;
  let client: ServiceClient;
  const question = 'List the open renewals of this quarter.';
  let reference: Outcome;
  let bodyBytes = 0;

  beforeAll(async () => {
    canned = await startLoopbackProxy(0, live.url);
    chained = await startCuttingProxy(canned.url);
    client = new ServiceClient({ apiKey: live.init.apiKey, baseURL: chained.url, fetch: net, maxRetries: 2 });
    reference = await collect(client.inference.stream(ask(question)));
    bodyBytes = chained.seen[0]!.bodyBytes;
  });

  afterAll(async () => {
    await chained?.close();
    await canned?.close();
  });

  it('is retried as the retry rules say (503 with Retry-After-Ms and X-Should-Retry: true), then resumes', async () => {
    expect(reference.end).toBeDefined();
    chained.cut({ match: INVOCATION, afterBytes: Math.floor(bodyBytes / 2), times: 1 });
    const unavailable = { status: 503, headers: { 'retry-after-ms': '20', 'x-should-retry': 'true' }, body: { error: 'service_unavailable' } };
    canned.script('pass', unavailable, 'pass');
    canned.seen.length = 0;
    const resumed = await collect(client.inference.stream(ask(question)));
    expect(resumed.error).toBeUndefined();
    expect(resumed.deltas).toEqual(reference.deltas);
    expect(resumed.end?.usage).toEqual(reference.end!.usage);
    expect(canned.seen.map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
    expect(canned.seen[1]!.headers['last-event-id']).toBe(canned.seen[2]!.headers['last-event-id']);
  });

  it.each([
    ['a 403 scope_required', { status: 403, body: { error: 'scope_required', message: 'needs tenant:read' } }, PermissionError],
    ['a 503 with X-Should-Retry: false', { status: 503, headers: { 'x-should-retry': 'false' }, body: { error: 'service_unavailable' } }, InternalServerError],
  ])('is not retried after %s: StreamInterruptedError at once, the refusal as its cause', async (_, answer, Refusal) => {
    chained.cut({ match: INVOCATION, afterBytes: Math.floor(bodyBytes / 2), times: 1 });
    canned.script('pass', answer);
    canned.seen.length = 0;
    const resumed = await collect(client.inference.stream(ask(question)));
    expect(resumed.error).toBeInstanceOf(StreamInterruptedError);
    const error = resumed.error as StreamInterruptedError;
    expect(error.cause).toBeInstanceOf(Refusal);
    expect(error.lastEventId).toBe(Number(canned.seen[1]!.headers['last-event-id']));
    expect(canned.seen.map((r) => r.method)).toEqual(['POST', 'GET']);
    expect(resumed.deltas.join('') + textOf(await allEvents(direct.runs.events(error.runId, { after: error.lastEventId })))).toBe(reference.deltas.join(''));
  });
});

describe('runs.events', () => {
  let runId = '';
  let log: RunEvent[] = [];

  beforeAll(async () => {
    const answer = await direct.inference.create(ask('Draft a follow-up email to Dana about the renewal.'));
    runId = answer.runId;
  });

  it('replays a finished run: created first, every fragment in order, run.usage, then one terminal event', async () => {
    proxy.cut();
    log = await allEvents(cut.runs.events(runId));
    const detail = await direct.runs.retrieve(runId);
    expect(log[0]).toMatchObject({ sequence: 1, type: 'run.created', runId });
    const sequences = log.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(textOf(log)).toBe(detail.run.content);
    expect(log.filter((e) => e.type === 'run.completed' || e.type === 'run.failed' || e.type === 'run.canceled')).toHaveLength(1);
    expect(log.at(-1)?.type).toBe('run.completed');
    expect(log.at(-2)).toMatchObject({ type: 'run.usage', usage: detail.run.usage });
    expect(requests(EVENTS)).toHaveLength(1);
  });

  it('starts after `after`', async () => {
    const middle = log[Math.floor(log.length / 2)]!.sequence;
    expect(await allEvents(direct.runs.events(runId, { after: middle }))).toEqual(log.filter((e) => e.sequence > middle));
  });

  it.each([
    ['in the first event', 20],
    ['in the middle', -1],
  ])('resumes a log cut %s with Last-Event-ID, yielding each event once', async (_, at) => {
    proxy.cut();
    await allEvents(cut.runs.events(runId));
    const whole = requests(EVENTS)[0]!.bodyBytes;
    proxy.cut({ match: EVENTS, afterBytes: at < 0 ? Math.floor(whole / 2) : at, times: 1 });
    expect(await allEvents(cut.runs.events(runId))).toEqual(log);
    const [first, second] = requests(EVENTS);
    expect(first!.cut).toBe(true);
    expect(second!.cut).toBe(false);
    if (at < 0) expect(Number(second!.headers['last-event-id'])).toBeGreaterThan(1);
    else expect(second!.headers['last-event-id']).toBeUndefined();
  });

  it('follows a live run until its terminal event', async () => {
    const hanging = direct.inference.stream(ask('Keep talking about the hiring plan [[hang]]'))[Symbol.asyncIterator]();
    const first = await hanging.next();
    expect(first.value).toMatchObject({ type: 'delta' });
    const [inProgress] = (await direct.runs.list({ status: 'in_progress', limit: 1 })).data;
    const live = inProgress!.id;
    const seen: RunEvent[] = [];
    const following = (async () => {
      for await (const event of cut.runs.events(live)) seen.push(event);
    })();
    await until(() => seen.some((e) => e.type === 'text.delta'), 'the first fragment, live');
    expect(seen.some((e) => e.type === 'run.canceled')).toBe(false);
    await direct.runs.cancel(live);
    await following;
    expect(seen.at(-1)?.type).toBe('run.canceled');
    expect(seen[0]).toMatchObject({ sequence: 1, type: 'run.created', runId: live });
    expect(seen).toEqual(await allEvents(direct.runs.events(live)));
    const rest = await hanging.next();
    expect(rest.value).toMatchObject({ type: 'end', runId: live });
  });

  it('throws NotFoundError for a run that does not exist', async () => {
    await expect(allEvents(direct.runs.events('run_0000000000000000Zz'))).rejects.toMatchObject({ name: 'NotFoundError', code: 'not_found' });
  });

  it('gives up after 1 + maxRetries attempts when every one is cut before an event', async () => {
    proxy.cut({ match: EVENTS, afterBytes: 0 });
    const error = await allEvents(cut.runs.events(runId, { after: 2 })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(error).toMatchObject({ runId, lastEventId: 2 });
    expect(requests(EVENTS)).toHaveLength(3);
    expect(requests(EVENTS).map((r) => r.headers['last-event-id'])).toEqual(['2', '2', '2']);
  });
});

function textOf(events: RunEvent[]): string {
  return events.map((e) => (e.type === 'text.delta' ? e.delta : '')).join('');
}
