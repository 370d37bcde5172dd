/**
 * @module Property tests (fast-check) of the redactor: a stream redactor's output over any split
 * of a text equals the one-shot redaction of the text, for texts built from hostile pieces
 * (names, separators, secrets, hosts, paths, frames, near misses) and random characters.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStreamRedactor, REDACTED, redactText } from './index.ts';

// Whole and partial hostile pieces; the splits cut them further.
const PIECES = [
  'OpenAI',
  'Open',
  'AI',
  'open ai',
  'o p e n a i',
  'g p t',
  'gpt',
  'GPT-4o',
  '-4o',
  '-mini',
  ' 3.5',
  ' Sonnet',
  'Claude',
  'Cl',
  'aude',
  'Anthropic',
  'Gemini',
  'Google',
  'Meta',
  'metadata',
  'Llama',
  'llama.cpp',
  'vLLM',
  'Ollama',
  'DeepSeek',
  'Deep',
  'Seek',
  'Qwen2.5',
  'Cohere',
  'coherent',
  'Azure',
  'Bedrock',
  'o1',
  'o3-mini',
  'Command R+',
  'Phi-3',
  'phi',
  '\u200b',
  '\u00ad',
  '\u200d',
  '\u{1F600}',
  '\ud83d',
  'service_sk_live_',
  'AbCdEfGhIjKlMnOpQrStUvWx',
  'service_mcp_',
  'sk-',
  'sk-proj-abcdefghijklmnop1234',
  'Bearer ',
  'abc.def-123_456',
  'eyJhbGciOiJIUzI1NiJ9',
  '.eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  'AKIA',
  'IOSFODNN7EXAMPLE',
  '9f86d081884c7d659a2feaa0c55ad015',
  'dGhpcyBpcyBhIHZlcnkgc2VjcmV0IHRva2VuIDEyMzQ1Ng',
  'password=',
  'hunter22',
  '10.0.',
  '3.7',
  ':5432',
  '192.168.1.1',
  '172.20.0.2',
  '127.0.0.1',
  '::1',
  'fe80::1',
  'localhost',
  ':8080',
  'db.internal',
  '.svc.cluster.local',
  'printer.local',
  'postgres://u:p@db/x',
  'https://user:pw@host',
  '/home/',
  'alice/.ssh',
  '/var/log/x',
  '/runs/run_AbC123',
  '/v1/inference',
  'C:\\',
  'Users\\bob',
  '~/',
  'file:///',
  'at ',
  'handler ',
  '(/app/x.ts:1:2)',
  'async ',
  'node:internal/x',
  'Error: ',
  'TypeError: ',
  'Error [E_X]: ',
  'File "/srv/a.py", line 3',
  'Traceback (most recent call last):',
  'Prelude',
  'Sonata',
  'Symphony',
  'Concerto',
  'run_AbCdEfGhIjKlMnOpQrSt',
  ' ',
  ' ',
  '\n',
  '\n',
  '.',
  ',',
  '-',
  '_',
  ':',
  '/',
  '(',
  ')',
  '"',
  '=',
  '\t',
];

const text = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PIECES) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }), {
    maxLength: 24,
  })
  .map((parts) => parts.join(''));

/** A text and a split of it into fragments (empty ones included). */
const splitText = text.chain((t) =>
  fc.array(fc.integer({ min: 0, max: t.length }), { maxLength: 12 }).map((cuts) => {
    const points = [0, ...cuts.sort((a, b) => a - b), t.length];
    return { text: t, fragments: points.slice(1).map((end, i) => t.slice(points[i], end)) };
  }),
);

function streamed(fragments: string[]): string {
  const redactor = createStreamRedactor();
  return fragments.map((fragment) => redactor.push(fragment)).join('') + redactor.end();
}

describe('stream redactor properties', () => {
  it('equals the one-shot redaction of the joined text, over any split', () => {
    fc.assert(
      fc.property(splitText, ({ text: joined, fragments }) => {
        expect(streamed(fragments)).toBe(redactText(joined));
      }),
      { numRuns: 1500 },
    );
  });

  it('equals the one-shot redaction when fed one character at a time', () => {
    fc.assert(
      fc.property(text, (joined) => {
        expect(streamed(Array.from(joined))).toBe(redactText(joined));
      }),
      { numRuns: 500 },
    );
  });

  it('equals the one-shot redaction on arbitrary Unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.array(fc.nat(80), { maxLength: 8 }), (joined, cuts) => {
        const points = [0, ...cuts.map((c) => Math.min(c, joined.length)).sort((a, b) => a - b), joined.length];
        expect(streamed(points.slice(1).map((end, i) => joined.slice(points[i], end)))).toBe(redactText(joined));
      }),
      { numRuns: 500 },
    );
  });
});

describe('holding back', () => {
  // Texts that are one match each: every proper prefix of them could still become that match,
  // so a stream redactor that has seen only the prefix must send nothing yet.
  const WHOLE_MATCHES = [
    'OpenAI',
    'Open AI',
    'g p t',
    'gpt-4o-mini',
    'Claude 3.5 Sonnet',
    'o3-mini',
    'service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx',
    'sk-proj-abcdefghijklmnop1234',
    'Bearer abc.def-123_456',
    'AKIAIOSFODNN7EXAMPLE',
    '10.0.3.7:5432',
    'fe80::1',
    'db.internal',
    'localhost:8080',
    '/home/alice/x',
    'C:\\Users\\bob',
    'at fn (/app/x.ts:1:2)',
    'TypeError: boom',
  ];

  it.each(WHOLE_MATCHES)('holds every prefix of %j', (whole) => {
    expect(redactText(whole)).toBe(REDACTED);
    for (let k = 1; k < whole.length; k += 1) {
      expect(createStreamRedactor().push(whole.slice(0, k)), whole.slice(0, k)).toBe('');
    }
  });
});

describe('redaction properties', () => {
  const NAMES = ['OpenAI', 'GPT-4o', 'gpt_4', 'g p t', 'Claude', 'Anthropic', 'Gemini', 'Mistral', 'Llama', 'DeepSeek', 'Qwen', 'Ollama', 'vLLM'];
  const LEAK = /openai|gpt|g p t|claude|anthropic|gemini|mistral|llama|deepseek|qwen|vllm/i;
  const BENIGN = ['The', 'run', 'agent', 'Prelude', 'Sonata', 'Symphony', 'Concerto', 'answered', 'metadata', 'sales', 'in', '42', 'coherent'];

  it('leaves no name in a text of names and ordinary words', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...NAMES, ...BENIGN), { maxLength: 20 }), (words) => {
        expect(redactText(words.join(' '))).not.toMatch(LEAK);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the aliases and ordinary words untouched', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...BENIGN), { maxLength: 20 }), fc.constantFrom(' ', ', ', '\n', '. '), (words, glue) => {
        const joined = words.join(glue);
        expect(redactText(joined)).toBe(joined);
        expect(redactText(joined)).not.toContain(REDACTED);
      }),
      { numRuns: 500 },
    );
  });
});
