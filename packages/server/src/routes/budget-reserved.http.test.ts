/**
 * Reservations of runs in progress are not a kill switch: over real HTTP, with streamed runs held
 * open by a loopback Chat Completions provider so their reservations fill the hour window, a new
 * invocation answers `429 budget_reserved` with a short `Retry-After` (not `kill_switch` until the
 * end of the hour), creates no run and sends no event, while `GET /kill-switches` reads not engaged;
 * once the runs end, the same invocation is served. On PGlite and (with DATABASE_URL) PostgreSQL.
 */
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zKillSwitches } from '../../../../generated/zod.ts';
import { DEFAULT_STU_RATES, KILL_SWITCH_LIMITS, stuForRun } from '../domain/usage/index.ts';
import { countRequestTokens, createEngines } from '../engine/index.ts';
import { BUILT_IN_TOOLS } from '../domain/agent-loop/index.ts';
import { defaultInstructions } from '../domain/agents/instructions.ts';
import { openStream, sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse } from '@service/testing/sse';

const MODEL = 'loopback-model';
const MESSAGES = [{ role: 'user' as const, content: 'Draft the renewal note' }];
const MAX_TOKENS = 300;
/** The first model call's whole input: Sales's instructions and tools, and the messages. */
const INPUT = await countRequestTokens({
  instructions: defaultInstructions('sales'),
  tools: BUILT_IN_TOOLS.map((tool) => tool.definition),
  messages: MESSAGES,
});
/** One run's worst case at Symphony's rate. */
const RESERVATION = stuForRun({ alias: 'Symphony', inputTokens: INPUT, outputTokens: MAX_TOKENS }, DEFAULT_STU_RATES);
const IN_FLIGHT = 3;

describe.each(testBackends())('reservations in flight on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let key: string;
  let cookie: string;
  const held: { res: ServerResponse; stream: ReturnType<typeof openStream> }[] = [];

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    // Streams answer a first fragment, then hold until released; synchronous calls answer at once.
    fake.handle = (req, res) => {
      if (!req.body.stream) return sendCompletion(res, MODEL, 'Done.', { prompt_tokens: 5, completion_tokens: 2 });
      const stream = openStream(res, MODEL);
      stream.text('Working on it. ');
      held.push({ res, stream });
    };
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
      openaiCompatible: { baseURL: fake.baseURL, apiKey: 'sk-test', models: { Symphony: MODEL } },
    });
    // The hour window holds exactly IN_FLIGHT worst cases.
    t = await createTestApp({ db: store.db, deps: { engines, killSwitchLimits: { ...KILL_SWITCH_LIMITS, hour: IN_FLIGHT * RESERVATION } } });
    key = await t.keyWith('orchestrator:invoke', 'usage:read');
    ({ cookie } = await t.login());
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const { res } of held.splice(0)) res.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fake.stop();
    await t?.close();
    await store.cleanup();
  });

  const invoke = (body: Record<string, unknown>) =>
    fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'sales', maxTokens: MAX_TOKENS, messages: MESSAGES, ...body }),
    });

  async function counts(): Promise<{ runs: number; failed: number; events: number }> {
    const [row] = await store.db.query<{ runs: number; failed: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM runs) AS runs, (SELECT count(*)::int FROM runs WHERE status = 'failed') AS failed,
              (SELECT count(*)::int FROM outbox_events WHERE type = 'run.failed') AS events`,
    );
    return row!;
  }

  it('a call that only in-flight reservations keep out answers 429 budget_reserved with a short Retry-After, no run, no event', async () => {
    // Concurrent streamed calls whose reservations fill the window, held open mid-answer.
    const streams = await Promise.all(Array.from({ length: IN_FLIGHT }, () => invoke({ stream: true })));
    for (const res of streams) expect(res.status).toBe(200);
    const readers = streams.map((res) => res.body!.getReader());
    await Promise.all(readers.map((reader) => reader.read()));
    expect(held).toHaveLength(IN_FLIGHT);
    const before = await counts();
    expect(before).toEqual({ runs: IN_FLIGHT, failed: 0, events: 0 });

    // Whether it asks for the whole worst case or for a little, and streamed or not.
    for (const body of [{}, { maxTokens: 16 }, { stream: true }]) {
      const refused = await invoke(body);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(10);
      expect(refused.headers.get('retry-after-ms')).toBe(String(retryAfter * 1000));
      expect(refused.headers.get('x-should-retry')).toBe('true');
      expect(await refused.json()).toEqual({
        error: 'budget_reserved',
        message: expect.any(String),
        budget: 'hour',
        retryAfterSec: retryAfter,
      });
    }
    expect(await counts()).toEqual(before);
    const switches = zKillSwitches.parse(await (await fetch(`${base}/kill-switches`, { headers: { cookie } })).json());
    expect(switches.hour).toMatchObject({ engaged: false, since: null, spentStu: 0, reservedStu: IN_FLIGHT * RESERVATION });

    // The runs end (well within their reservations): the window has room again and the call is served.
    for (const { stream } of held.splice(0)) {
      stream.usage({ prompt_tokens: 6, completion_tokens: 4 });
      stream.done();
    }
    for (const reader of readers) {
      let text = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
      expect(parseSse(text).at(-1)!.event).toBe('end');
    }
    const served = await invoke({});
    expect(served.status).toBe(200);
    expect(await counts()).toEqual({ runs: IN_FLIGHT + 1, failed: 0, events: 0 });
  });
});
