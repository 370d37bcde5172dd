/**
 * The engine does not redact; the redactor does. These tests pipe real engine streams through the
 * stream redactor, the way the invocation route sends fragments, and check that a provider name
 * split across two fragments never leaves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPARTMENT_SLUGS } from '../vocabulary/catalog.ts';
import { createStreamRedactor, redactText } from '../redact/index.ts';
import type { Engine, EngineRequest } from './engine.ts';
import { createLocalEngine } from './local/index.ts';
import { openStream, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { createOpenAICompatibleEngine } from './openai-compatible/index.ts';

let fake: FakeChatServer;
beforeAll(async () => {
  fake = await startFakeChatServer();
});
afterAll(async () => {
  await fake.stop();
});

const request: EngineRequest = {
  alias: 'Symphony',
  agentSlug: 'it',
  messages: [{ role: 'user', content: 'Which assistant are you?' }],
};

/** Engine text fragments in, redacted fragments out (what goes on the wire), plus the raw text. */
async function pipe(engine: Engine, req: EngineRequest): Promise<{ raw: string[]; sent: string[] }> {
  const redactor = createStreamRedactor();
  const raw: string[] = [];
  const sent: string[] = [];
  for await (const event of engine.stream(req)) {
    if (event.type !== 'text') continue;
    raw.push(event.delta);
    const out = redactor.push(event.delta);
    if (out !== '') sent.push(out);
  }
  const rest = redactor.end();
  if (rest !== '') sent.push(rest);
  return { raw, sent };
}

describe('engine stream through the redactor', () => {
  it('removes a provider name split across two fragments', async () => {
    // Sent a moment apart, as a model streams: fragments that arrive together would reach the redactor as one.
    fake.handle = async (req, res) => {
      const stream = openStream(res, String(req.body.model));
      for (const fragment of ['I am Chat', 'GPT, built by Open', 'AI. Ask me anything.']) {
        stream.text(fragment);
        await sleep(20);
      }
      stream.done();
    };
    const engine = createOpenAICompatibleEngine({ baseURL: fake.baseURL, models: { Symphony: 'any-model' } });
    const { raw, sent } = await pipe(engine, request);

    // The provider really did split the names: no single fragment holds either of them.
    expect(raw).toEqual(['I am Chat', 'GPT, built by Open', 'AI. Ask me anything.']);
    expect(raw.some((f) => /chatgpt|openai/i.test(f))).toBe(false);
    expect(raw.join('')).toMatch(/ChatGPT.*OpenAI/);

    const wire = sent.join('');
    expect(wire).not.toMatch(/chat\s*gpt|gpt|open\s*ai/i);
    for (const fragment of sent) expect(fragment).not.toMatch(/gpt|open|\bai\b/i);
    expect(wire).toBe(redactText(raw.join('')));
    expect(wire).toContain('Ask me anything.');
  });

  it("leaves the local engine's departmental answers intact", async () => {
    const engine = createLocalEngine();
    for (const agentSlug of DEPARTMENT_SLUGS) {
      const { raw, sent } = await pipe(engine, { ...request, agentSlug, messages: [{ role: 'user', content: 'Plan the next step' }] });
      expect(sent.join('')).toBe(raw.join(''));
    }
  });
});

describe("an engine's confidential terms", () => {
  it('are its model names, the host of its base URL and its key; a redactor built from them removes each', async () => {
    const { createRedactor, REDACTED } = await import('../redact/index.ts');
    const engine = createOpenAICompatibleEngine({
      baseURL: 'https://inference.acme-prod.net/v1',
      apiKey: 'prov-Xk29fLq0Zt7Wm3Np8Rv5',
      models: { Sonata: 'acme-sonata-v2', Concerto: 'acme-concerto-large-0601' },
    });
    expect(engine.confidentialTerms).toEqual(['acme-sonata-v2', 'acme-concerto-large-0601', 'inference.acme-prod.net', 'prov-Xk29fLq0Zt7Wm3Np8Rv5']);
    expect(createLocalEngine().confidentialTerms).toBeUndefined();
    const redactor = createRedactor({ terms: engine.confidentialTerms ?? [] });
    expect(redactor.text('acme-sonata-v2 at inference.acme-prod.net with prov-Xk29fLq0Zt7Wm3Np8Rv5')).toBe(`${REDACTED} at ${REDACTED} with ${REDACTED}`);
  });
});
