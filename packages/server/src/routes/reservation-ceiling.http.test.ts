/**
 * The reservation is the ceiling of what a run costs, over real HTTP against a loopback Chat
 * Completions provider that ignores `max_tokens` and reports far more usage than it was allowed:
 * the answer is cut at `maxTokens` (sync and stream), the charge never exceeds the reservation,
 * what the provider reported beyond it is recorded on the run but not billed, and a run that
 * reaches the per-run limit mid-stream fails `kill_switch:run` with `event: error`. On PGlite and
 * (with DATABASE_URL) on PostgreSQL.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zInferenceResponse, zKillSwitches, zRunDetail, zStreamEnd, zStreamError, zUsage } from '../../../../generated/zod.ts';
import { setQuotaOverride } from '../domain/agents/settings.ts';
import { unbilledInWindows } from '../domain/spending/index.ts';
import { DEFAULT_STU_RATES, KILL_SWITCH_LIMITS, stuForRun, type KillSwitchLimits } from '../domain/usage/index.ts';
import { countRequestTokens, countTextTokens, createEngines } from '../engine/index.ts';
import { BUILT_IN_TOOLS } from '../domain/agent-loop/index.ts';
import { defaultInstructions } from '../domain/agents/instructions.ts';
import { openStream, sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse } from '@service/testing/sse';

const MODEL = 'loopback-model';
/** 30,000 characters of ordinary prose, far more than 16 tokens. */
const FLOOD = 'The quarterly numbers look strong across every region we track. '.repeat(470).slice(0, 30_000);
const REPORTED = { prompt_tokens: 9_000, completion_tokens: 6_000 };
const MESSAGES = [{ role: 'user' as const, content: 'Summarise the quarter for the board' }];
/** The first model call's whole input as the reservation counts it: Finance's instructions and tools, and the messages. */
const INPUT_ESTIMATE = await countRequestTokens({
  instructions: defaultInstructions('finance'),
  tools: BUILT_IN_TOOLS.map((tool) => tool.definition),
  messages: MESSAGES,
});
/** Symphony's STU per token. */
const RATE = DEFAULT_STU_RATES.Symphony;
/** The per-run limit of the last two tests: the input and a few output tokens, far below the 6,000 reported. */
const RUN_LIMIT = (INPUT_ESTIMATE + 4) * RATE;

describe.each(testBackends())('the reservation caps what a run costs on $name', { timeout: 120_000 }, ({ open }) => {
  let store: TestStore;
  let fake: FakeChatServer;
  let t: TestApp;
  let server: ServerType;
  let base: string;
  let key: string;
  let cookie: string;

  beforeEach(async () => {
    store = await open();
    fake = await startFakeChatServer();
    // A provider that ignores max_tokens: the whole flood, and usage far beyond what was asked.
    fake.handle = (req, res) => {
      if (!req.body.stream) return sendCompletion(res, MODEL, FLOOD, REPORTED);
      const stream = openStream(res, MODEL);
      for (let i = 0; i < FLOOD.length; i += 100) stream.text(FLOOD.slice(i, i + 100));
      stream.usage(REPORTED);
      stream.done();
    };
  });
  afterEach(async () => {
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await fake.stop();
    await t?.close();
    await store.cleanup();
  });

  async function start(limits: KillSwitchLimits = KILL_SWITCH_LIMITS): Promise<void> {
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
      openaiCompatible: { baseURL: fake.baseURL, apiKey: 'sk-test', models: { Symphony: MODEL } },
    });
    t = await createTestApp({ db: store.db, deps: { engines, killSwitchLimits: limits } });
    key = await t.keyWith('orchestrator:invoke', 'usage:read', 'tenant:read');
    ({ cookie } = await t.login());
    // A tiny quota, room for the input and a hundred output tokens: the 6,000 reported output tokens would be many times it.
    await setQuotaOverride(t.db, t.clock, t.workspaceId, (INPUT_ESTIMATE + 100) * RATE);
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const invoke = (body: Record<string, unknown>) =>
    fetch(`${base}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'finance', messages: MESSAGES, ...body }),
    });
  const get = async (path: string) => (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })).json();
  const getAsMember = async (path: string) => (await fetch(`${base}${path}`, { headers: { cookie } })).json();

  async function unbilled(runId: string) {
    const [row] = await store.db.query<{ input: number; output: number; stu: number }>(
      `SELECT unbilled_input_tokens AS input, unbilled_output_tokens AS output, unbilled_stu::float8 AS stu FROM runs WHERE id = $1`,
      [runId],
    );
    return { input: Number(row!.input), output: Number(row!.output), stu: Number(row!.stu) };
  }

  /** The charge equals the period's consumption and the hour window's spend, and nothing stays held. */
  async function expectConsistent(stu: number): Promise<void> {
    expect(zUsage.parse(await get('/usage/current')).consumedStu).toBe(stu);
    const switches = zKillSwitches.parse(await getAsMember('/kill-switches'));
    expect(switches.hour).toMatchObject({ spentStu: stu, reservedStu: 0, engaged: false });
    expect(switches.day).toMatchObject({ spentStu: stu, reservedStu: 0, engaged: false });
  }

  const reservation = stuForRun({ alias: 'Symphony', inputTokens: INPUT_ESTIMATE, outputTokens: 16 }, DEFAULT_STU_RATES);

  it('a synchronous answer is cut at maxTokens and billed within the reservation', async () => {
    await start();
    const res = await invoke({ maxTokens: 16 });
    expect(res.status).toBe(200);
    const body = zInferenceResponse.parse(await res.json());
    expect(countTextTokens(body.content)).toBeLessThanOrEqual(16);
    expect(body.content.length).toBeGreaterThan(0);
    expect(FLOOD.startsWith(body.content)).toBe(true);
    expect(body.usage.outputTokens).toBeLessThanOrEqual(16);
    expect(body.usage.inputTokens).toBeLessThanOrEqual(INPUT_ESTIMATE);
    const { run } = zRunDetail.parse(await get(`/runs/${body.runId}`));
    expect(run).toMatchObject({ status: 'completed', content: body.content });
    expect(run.usage.stu).toBeLessThanOrEqual(reservation);
    expect(run.usage.stu).toBeGreaterThan(0);
    await expectConsistent(run.usage.stu);
    // What the provider reported beyond the charge is on the run, for operators, not billed.
    const over = await unbilled(body.runId);
    expect(over.output).toBe(REPORTED.completion_tokens - body.usage.outputTokens);
    expect(over.input).toBe(REPORTED.prompt_tokens - body.usage.inputTokens);
    expect(over.stu).toBe((over.input + over.output) * DEFAULT_STU_RATES.Symphony);
    // What `service kill-switch status` shows the operator for the current windows.
    expect(await unbilledInWindows(store.db, t.workspaceId, t.clock.now())).toEqual({ hour: over.stu, day: over.stu });
  });

  it('a streamed answer is cut at maxTokens and billed within the reservation', async () => {
    await start();
    const res = await invoke({ maxTokens: 16, stream: true });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    const end = zStreamEnd.parse(events.at(-1)!.data);
    expect(events.at(-1)!.event).toBe('end');
    const content = events
      .filter((e) => e.event === 'message')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    expect(countTextTokens(content)).toBeLessThanOrEqual(16);
    expect(FLOOD.startsWith(content)).toBe(true);
    expect(end.usage.outputTokens).toBeLessThanOrEqual(16);
    const { run } = zRunDetail.parse(await get(`/runs/${end.runId}`));
    expect(run).toMatchObject({ status: 'completed', content });
    expect(run.usage.stu).toBeLessThanOrEqual(reservation);
    await expectConsistent(run.usage.stu);
    expect((await unbilled(end.runId)).output).toBeGreaterThan(0);
  });

  it('a run that reaches the per-run limit mid-stream fails kill_switch:run with event: error, billed within its reservation', async () => {
    await start({ ...KILL_SWITCH_LIMITS, run: RUN_LIMIT });
    const res = await invoke({ maxTokens: 1_000, stream: true });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.at(-1)!.event).toBe('error');
    const error = zStreamError.parse(events.at(-1)!.data);
    expect(error.error).toBe('kill_switch');
    const delivered = events
      .filter((e) => e.event === 'message')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    expect(countTextTokens(delivered)).toBeLessThanOrEqual(RUN_LIMIT / RATE - INPUT_ESTIMATE);
    const { run } = zRunDetail.parse(await get(`/runs/${error.runId}`));
    expect(run).toMatchObject({ status: 'failed', failureReason: 'kill_switch:run' });
    expect(run.usage.stu).toBeLessThanOrEqual(RUN_LIMIT);
    await expectConsistent(run.usage.stu);
  });

  it('a synchronous run that reaches the per-run limit answers 429 kill_switch run, billed within the limit', async () => {
    await start({ ...KILL_SWITCH_LIMITS, run: RUN_LIMIT });
    const res = await invoke({ maxTokens: 1_000 });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'kill_switch', kind: 'run' });
    const [row] = await store.db.query<{ stu: number; status: string; reason: string }>(
      `SELECT stu::float8 AS stu, status, failure_reason AS reason FROM runs`,
    );
    expect(row).toMatchObject({ status: 'failed', reason: 'kill_switch:run' });
    expect(Number(row!.stu)).toBeLessThanOrEqual(RUN_LIMIT);
    expect(Number(row!.stu)).toBeGreaterThan(0);
    await expectConsistent(Number(row!.stu));
  });
});
