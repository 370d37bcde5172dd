/**
 * @module The redactor beyond its fixed lists: the deployment's own terms (model names, the provider
 * host, the provider key) given at construction, more providers and model families,
 * more credential formats, JVM and Go traces, and the ordinary prose that shares their words.
 */
import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactText } from './index.ts';

const R = REDACTED;

describe('redactText removes the providers, keys and traces it used to let through', () => {
  it.each([
    ['IBM Granite', 'IBM Granite 3.1 wrote this', `${R} wrote this`],
    ['Granite with a version', 'Granite 3.1 wrote this', `${R} wrote this`],
    ['granite model id', 'granite-3.1-8b-instruct', R],
    ['watsonx', 'served by watsonx.ai', `served by ${R}.ai`],
    ['Kimi', 'I am Kimi, made by Moonshot AI.', `I am ${R}, made by ${R}.`],
    ['kimi-k2', 'model kimi-k2-instruct', `model ${R}`],
    ['moonshot model', 'moonshot-v1-8k', R],
    ['Amazon Nova', 'Amazon Nova Pro here', `${R} here`],
    ['amazon.nova-pro', 'amazon.nova-pro-v1:0', R],
    ['nova-lite', 'use nova-lite today', `use ${R} today`],
    ['Amazon Titan', 'Amazon Titan answered', `${R} answered`],
    ['titan-text', 'amazon.titan-text-express-v1', R],
    ['Jamba', 'Jamba 1.5 Large by AI21 Labs', `${R} by ${R} Labs`],
    ['DBRX', 'DBRX Instruct from Databricks', `${R} from ${R}`],
    ['yi-34b', 'yi-34b-chat', `${R}-chat`],
    ['Yi-1.5', 'Yi-1.5 answered', `${R} answered`],
    ['01.AI', 'made by 01.AI', `made by ${R}`],
    ['falcon-180b', 'falcon-180b-chat', `${R}-chat`],
    ['Falcon 40B', 'Falcon 40B is open', `${R} is open`],
    ['sonar-pro', 'Perplexity sonar-pro', R],
    ['sonar-reasoning', 'ask sonar-reasoning', `ask ${R}`],
    ['Perplexity AI', 'Perplexity AI built me', `${R} built me`],
    ['pplx', 'pplx-70b-online', R],
    ['Together AI', 'hosted on Together AI', `hosted on ${R}`],
    ['together.ai', 'api.together.xyz and together.ai', `api.${R} and ${R}`],
    ['Fireworks AI', 'Fireworks AI serves it', `${R} serves it`],
    ['fireworks model path', 'accounts/fireworks/models/x', `${R}/models/x`],
    ['NVIDIA NIM', 'NVIDIA NIM runs it', `${R} runs it`],
    ['nvidia api host', 'integrate.api.nvidia.com', `integrate.${R}`],
    ['Replicate', 'replicate.com/meta and Replicate API', `${R}/${R} and ${R}`],
    // credentials
    ['a Google API key', 'key AIzaSyD-1234567890abcdefghijklmnopqrstu', `key ${R}`],
    ['a Hugging Face token', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', R],
    ['a GitLab token', 'glpat-AbCdEfGhIjKlMnOpQrSt', R],
    ['a Groq key', 'gsk_AbCdEfGhIjKlMnOpQrStUvWx0123', R],
    ['a Replicate token', 'r8_AbCdEfGhIjKlMnOpQrStUvWx0123', R],
    ['an NVIDIA key', 'nvapi-AbCdEfGhIjKlMnOpQrStUvWx0123', R],
    ['a GitHub token', 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', R],
    // JVM and Go traces
    ['a qualified JVM exception', 'failed with java.lang.NullPointerException', `failed with ${R}`],
    ['a JVM exception with message', 'org.apache.http.conn.HttpHostConnectException: refused', R],
    ['Exception in thread', 'Exception in thread "main" boom', R],
    ['a Go panic', 'panic: runtime error: index out of range [3]', R],
    ['a Go runtime error mid-line', 'got runtime error: invalid memory address', `got ${R}`],
    ['a Go frame', '\tmain.go:42 +0x1d', `\t${R}`],
  ])('%s', (_name, input, want) => {
    expect(redactText(input)).toBe(want);
  });
});

describe('redactText keeps ordinary prose that shares those words', () => {
  it.each([
    ['granite', 'a granite countertop'],
    ['nova', 'Nova Scotia and a bossa nova'],
    ['titan', 'a titan of industry'],
    ['falcon', 'the falcon flew'],
    ['yi', 'Yi said hello to Li'],
    ['sonar', 'the submarine used sonar'],
    ['perplexity', 'to my perplexity'],
    ['together', 'we work together and build AI together'],
    ['fireworks', 'fireworks at night'],
    ['replicate', 'replicate the result'],
    ['moonshot', 'a moonshot project'],
    ['an exception in prose', 'an exception to the rule: none'],
  ])('%s', (_name, input) => {
    expect(redactText(input)).toBe(input);
  });
});

describe('createRedactor with the deployment terms', () => {
  const redactor = createRedactor({ terms: ['acme-sonata-v2', 'inference.acme-prod.net', 'prov-key-0123456789abcdef', 'x'] });

  it.each([
    ['a configured model name', 'I am acme-sonata-v2.', `I am ${R}.`],
    ['in another case and spacing', 'ACME Sonata V2 here', `${R} here`],
    ['the provider host', 'see https://inference.acme-prod.net/v1', `see https://${R}/v1`],
    ['the provider key', 'key=prov-key-0123456789abcdef', `key=${R}`],
  ])('%s', (_name, input, want) => {
    expect(redactor.text(input)).toBe(want);
  });

  it('ignores terms too short to be told from prose', () => {
    expect(redactor.text('x marks the spot')).toBe('x marks the spot');
  });

  it('keeps the alias "Sonata" on its own', () => {
    expect(redactor.text('Sonata answered')).toBe('Sonata answered');
  });

  it('catches a term split into one-character fragments', () => {
    const text = 'Model: acme-sonata-v2 at inference.acme-prod.net.';
    const stream = redactor.stream();
    let out = '';
    for (const ch of text) out += stream.push(ch);
    out += stream.end();
    expect(out).toBe(`Model: ${R} at ${R}.`);
  });

  it('leaves the module-level redactor without the terms (one app, one redactor)', () => {
    expect(redactText('acme-sonata-v2')).toBe('acme-sonata-v2');
  });

  it('redacts JSON values deeply', () => {
    expect(redactor.value({ a: ['acme-sonata-v2'] })).toEqual({ a: [R] });
  });
});

describe('memoised redaction of short strings', () => {
  it('answers a repeated string as the first time, per redactor (the deployment terms stay its own)', () => {
    const redactor = createRedactor({ terms: ['acme-sonata-v2'] });
    for (let i = 0; i < 3; i += 1) {
      expect(redactor.text('served by acme-sonata-v2')).toBe(`served by ${REDACTED}`);
      expect(redactText('served by acme-sonata-v2')).toBe('served by acme-sonata-v2');
      expect(redactText('Built by OpenAI.')).toBe(`Built by ${REDACTED}.`);
    }
  });

  it('stays right past its bound, for long strings and for strings too long to keep', () => {
    for (let i = 0; i < 3000; i += 1) expect(redactText(`run ${i} by gpt-4o`)).toBe(`run ${i} by ${REDACTED}`);
    expect(redactText('Built by OpenAI.')).toBe(`Built by ${REDACTED}.`);
    for (const words of [30, 20_000]) {
      const long = `${'ordinary words '.repeat(words)}OpenAI`;
      for (let i = 0; i < 12; i += 1) {
        expect(redactText(`${long}. Item ${i % 6}`)).toBe(`${'ordinary words '.repeat(words)}${REDACTED}. Item ${i % 6}`);
      }
    }
  });
});
