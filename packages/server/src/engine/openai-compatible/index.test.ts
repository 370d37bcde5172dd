import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useFakeChatServer } from '@service/testing/fake-chat-fixture';
import { collect } from '../collect.ts';
import type { EngineEvent, EngineRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countMessageTokens, countTextTokens } from '../tokens.ts';
import { openStream, sendCompletion, sendError, sendStream, startFakeChatServer } from '@service/testing/fake-chat-server';
import { createOpenAICompatibleEngine, type OpenAICompatibleOptions } from './index.ts';

/** Words a provider error body carries that must never reach an EngineError. */
const PROVIDER_WORDS = /openai|gpt|api\.openai\.com|sk-live|fake-model|org-123|overloaded|internal details/i;
const PROVIDER_BODY = {
  error: {
    message: 'OpenAI: model gpt-4o is overloaded (api.openai.com, org-123). Internal details: sk-live-XYZ',
    type: 'server_error',
    code: 'model_overloaded',
  },
};

const fake = useFakeChatServer();

const engine = (options: Partial<OpenAICompatibleOptions> = {}) =>
  createOpenAICompatibleEngine({
    baseURL: fake().baseURL,
    apiKey: 'test-key',
    models: { Prelude: 'fake-model-small', Sonata: 'fake-model-medium' },
    ...options,
  });

const request = (extra: Partial<EngineRequest> = {}): EngineRequest => ({
  alias: 'Sonata',
  agentSlug: 'sales',
  messages: [
    { role: 'system', content: 'You are the sales agent.' },
    { role: 'user', content: 'Draft a follow-up for the lead.' },
  ],
  ...extra,
});

async function failure(events: AsyncIterable<EngineEvent>, seen: EngineEvent[] = []): Promise<EngineError> {
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw new Error(`not an EngineError: ${String(error)}`);
  }
  throw new Error('the stream did not fail');
}

function expectNeutral(error: EngineError): void {
  for (const text of [error.message, String(error), JSON.stringify(error), JSON.stringify(Object.entries(error))]) {
    expect(text).not.toMatch(PROVIDER_WORDS);
  }
  expect(Object.keys(error).sort()).toEqual(['name', 'reason', 'usage']);
}

describe('openai-compatible engine', () => {
  it('answers in one piece when the request is not streamed, with the server usage', async () => {
    fake().handle = (req, res) => sendCompletion(res, String(req.body.model), 'Here is your follow-up.', { prompt_tokens: 21, completion_tokens: 6 });
    const events: EngineEvent[] = [];
    for await (const event of engine().stream(request({ stream: false, maxTokens: 300, effort: 'high' }))) events.push(event);
    expect(events).toEqual([
      { type: 'text', delta: 'Here is your follow-up.' },
      { type: 'usage', inputTokens: 21, outputTokens: 6 },
    ]);
    const [sent] = fake().requests;
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe('Bearer test-key');
    expect(sent?.body).toEqual({
      model: 'fake-model-medium',
      messages: request().messages,
      max_tokens: 300,
      reasoning_effort: 'high',
      stream: false,
    });
  });

  it('streams fragments one by one as the model sends them, and takes usage from the final usage chunk', async () => {
    fake().handle = async (req, res) => {
      const stream = openStream(res, String(req.body.model));
      for (const fragment of ['Hello', ', here is ', 'the plan.']) {
        stream.text(fragment);
        await sleep(20);
      }
      stream.usage({ prompt_tokens: 30, completion_tokens: 7 });
      stream.done();
    };
    const events: EngineEvent[] = [];
    for await (const event of engine().stream(request({ alias: 'Prelude' }))) events.push(event);
    expect(events).toEqual([
      { type: 'text', delta: 'Hello' },
      { type: 'text', delta: ', here is ' },
      { type: 'text', delta: 'the plan.' },
      { type: 'usage', inputTokens: 30, outputTokens: 7 },
    ]);
    expect(fake().requests[0]?.body).toMatchObject({ model: 'fake-model-small', stream: true, stream_options: { include_usage: true } });
    expect(fake().requests[0]?.body).not.toHaveProperty('max_tokens');
    expect(fake().requests[0]?.body).not.toHaveProperty('reasoning_effort');
  });

  it('passes fragments that arrive together as one, after the first', async () => {
    // The whole answer in one write: one read of the service, as a model server that sends a burst at once.
    fake().handle = (req, res) => {
      const chunk = (fields: Record<string, unknown>) =>
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: String(req.body.model), ...fields })}\n\n`;
      const text = (content: string) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        `${text('Hello')}${text(', here is ')}${text('the plan.')}${chunk({ choices: [], usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 } })}data: [DONE]\n\n`,
      );
    };
    const events: EngineEvent[] = [];
    for await (const event of engine().stream(request())) events.push(event);
    expect(events).toEqual([
      { type: 'text', delta: 'Hello' },
      { type: 'text', delta: ', here is the plan.' },
      { type: 'usage', inputTokens: 30, outputTokens: 7 },
    ]);
  });

  it('counts with the tokenizer when the server reports no usage', async () => {
    fake().handle = (req, res) => sendStream(res, String(req.body.model), ['Counted ', 'locally.']);
    const result = await collect(engine().stream(request()));
    expect(result.content).toBe('Counted locally.');
    expect(result.usage).toEqual({ inputTokens: countMessageTokens(request().messages), outputTokens: countTextTokens('Counted locally.') });
  });

  it('counts with the tokenizer for a non-streamed answer without usage', async () => {
    fake().handle = (req, res) => sendCompletion(res, String(req.body.model), 'One piece.');
    const result = await collect(engine({ stream: false }).stream(request()));
    expect(result).toMatchObject({ content: 'One piece.', usage: { outputTokens: countTextTokens('One piece.') } });
    expect(fake().requests[0]?.body.stream).toBe(false);
  });

  it('streams only answer text, never reasoning fields', async () => {
    fake().handle = (req, res) => {
      const stream = openStream(res, String(req.body.model));
      stream.raw(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { reasoning_content: 'secret chain of thought' }, finish_reason: null }] })}\n\n`,
      );
      stream.text('Visible.');
      stream.done();
    };
    const result = await collect(engine().stream(request()));
    expect(result.content).toBe('Visible.');
  });

  it.each([
    [{}, { effort: 'low' }, { max_tokens: 50, reasoning_effort: 'low' }],
    [{}, { effort: 'x-high' }, { max_tokens: 50, reasoning_effort: 'high' }],
    [{}, { effort: 'max' }, { max_tokens: 50, reasoning_effort: 'high' }],
    [{}, { effort: 'max', powerMode: 'low' }, { max_tokens: 50, reasoning_effort: 'low' }],
    [{ maxTokensParam: 'max_completion_tokens' }, { effort: 'medium' }, { max_completion_tokens: 50, reasoning_effort: 'medium' }],
    [{ sendEffort: false }, { effort: 'high' }, { max_tokens: 50 }],
  ] as const)('maps options %j and request %j', async (options, extra, want) => {
    fake().handle = (req, res) => sendCompletion(res, String(req.body.model), 'ok', { prompt_tokens: 1, completion_tokens: 1 });
    await collect(engine(options).stream(request({ ...extra, maxTokens: 50, stream: false })));
    const body = fake().requests[0]!.body;
    const { model: _m, messages: _ms, stream: _s, ...mapped } = body;
    expect(mapped).toEqual(want);
  });

  it.each([
    [400, 'engine_error'],
    [401, 'engine_error'],
    [404, 'engine_error'],
    [422, 'engine_error'],
    [408, 'timeout'],
    [429, 'engine_error'],
    [500, 'engine_error'],
    [502, 'engine_error'],
    [503, 'engine_error'],
    [504, 'timeout'],
  ] as const)('a %i from the provider is a neutral EngineError %s', async (status, reason) => {
    fake().handle = (_req, res) => sendError(res, status, PROVIDER_BODY);
    for (const stream of [true, false]) {
      const seen: EngineEvent[] = [];
      const error = await failure(engine().stream(request({ stream })), seen);
      expect(seen).toEqual([]);
      expect(error.reason).toBe(reason);
      expect(error.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
      expectNeutral(error);
    }
  });

  it('an error event in the middle of a stream is a neutral EngineError with the usage so far', async () => {
    fake().handle = (req, res) => {
      const stream = openStream(res, String(req.body.model));
      stream.text('Partial answer ');
      stream.raw(`data: ${JSON.stringify(PROVIDER_BODY)}\n\n`);
      stream.done();
    };
    const seen: EngineEvent[] = [];
    const error = await failure(engine().stream(request()), seen);
    expect(seen).toEqual([{ type: 'text', delta: 'Partial answer ' }]);
    expect(error.reason).toBe('engine_error');
    expect(error.usage).toEqual({ inputTokens: countMessageTokens(request().messages), outputTokens: countTextTokens('Partial answer ') });
    expectNeutral(error);
  });

  it('a connection dropped mid-stream is an EngineError, never a silent end', async () => {
    fake().handle = (req, res) => {
      openStream(res, String(req.body.model)).text('Cut ');
      setTimeout(() => res.socket?.destroy(), 10);
    };
    const error = await failure(engine().stream(request()));
    expect(error.reason).toBe('engine_error');
    expectNeutral(error);
  });

  it('a garbled chunk is an EngineError', async () => {
    fake().handle = (req, res) => {
      const stream = openStream(res, String(req.body.model));
      stream.raw('data: {not json from OpenAI\n\n');
      stream.done();
    };
    const error = await failure(engine().stream(request()));
    expect(error.reason).toBe('engine_error');
    expectNeutral(error);
  });

  it('an unreachable server is an engine_error', async () => {
    const gone = await startFakeChatServer();
    await gone.stop();
    const error = await failure(engine({ baseURL: gone.baseURL }).stream(request()));
    expect(error.reason).toBe('engine_error');
    expectNeutral(error);
  });

  it('a server that does not answer in time is a timeout', async () => {
    fake().handle = () => {}; // never answers
    const error = await failure(engine({ timeoutMs: 50 }).stream(request()));
    expect(error.reason).toBe('timeout');
    expectNeutral(error);
  });

  it('an alias without a model is an engine_error and sends nothing', async () => {
    const error = await failure(engine().stream(request({ alias: 'Concerto' })));
    expect(error.reason).toBe('engine_error');
    expect(fake().requests).toEqual([]);
  });

  it('aborting stops the stream with aborted and closes the upstream request', async () => {
    fake().handle = (req, res) => openStream(res, String(req.body.model)).text('First words '); // then holds the stream open
    const controller = new AbortController();
    const seen: EngineEvent[] = [];
    const pending = failure(engine().stream(request({ signal: controller.signal })), seen);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => seen.length > 0 && (clearInterval(poll), resolve()), 5);
    });
    controller.abort();
    const error = await pending;
    expect(error.reason).toBe('aborted');
    expect(error.usage.outputTokens).toBe(countTextTokens('First words '));
    await fake().closed();
  });

  it('an abort before the answer arrives is aborted', async () => {
    fake().handle = () => {};
    const controller = new AbortController();
    const pending = failure(engine().stream(request({ signal: controller.signal, stream: false })));
    setTimeout(() => controller.abort(), 20);
    expect((await pending).reason).toBe('aborted');
  });

  it('breaking out of the loop closes the upstream request', async () => {
    fake().handle = (req, res) => openStream(res, String(req.body.model)).text('Only this ');
    for await (const event of engine().stream(request())) {
      if (event.type === 'text') break;
    }
    await fake().closed();
  });

  it("passes provider text through untouched: redaction is the redactor's job", async () => {
    fake().handle = (req, res) => sendStream(res, String(req.body.model), ['I am Chat', 'GPT, made by Open', 'AI.']);
    const result = await collect(engine().stream(request()));
    expect(result.content).toBe('I am ChatGPT, made by OpenAI.');
  });
});
