/**
 * @module Table-driven tests of the redactor with hostile inputs: what must go, what must stay
 * (aliases, the service's own routes and identifiers, ordinary words), JSON values, streams.
 */
import { describe, expect, it } from 'vitest';
import { createStreamRedactor, REDACTED, redactText, redactValue } from './index.ts';

const R = REDACTED;

describe('redactText removes', () => {
  it.each([
    // provider and model names
    ['OpenAI', 'Built by OpenAI.', `Built by ${R}.`],
    ['Open AI with a space', 'Built by Open AI.', `Built by ${R}.`],
    ['open-ai with a hyphen', 'open-ai rocks', `${R} rocks`],
    ['ChatGPT', 'I am ChatGPT', `I am ${R}`],
    ['GPT-4o', 'model GPT-4o today', `model ${R} today`],
    ['gpt-4o-mini', 'use gpt-4o-mini', `use ${R}`],
    ['gpt_4 with underscore', 'gpt_4 ok', `${R} ok`],
    ['gpt-4.1-mini', 'gpt-4.1-mini.', `${R}.`],
    ['spelled g p t', 'call g p t now', `call ${R} now`],
    ['spelled g.p.t-4', 'g.p.t-4 answered', `${R} answered`],
    ['spelled o-p-e-n-a-i', 'by o-p-e-n-a-i.', `by ${R}.`],
    ['mixed case gPt', 'gPt', R],
    ['GPTs plural', 'custom GPTs', `custom ${R}s`],
    ['o1', 'o1 thinks', `${R} thinks`],
    ['o3-mini', 'o3-mini-high is fast', `${R} is fast`],
    ['Anthropic', 'Anthropic says', `${R} says`],
    ['Claude 3.5 Sonnet', 'Claude 3.5 Sonnet wrote', `${R} wrote`],
    ['claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20240620', R],
    ['AskClaude inside a word', 'AskClaude', `Ask${R}`],
    ['Gemini 1.5 Pro', 'Gemini 1.5 Pro here', `${R} here`],
    ['Google', 'Google DeepMind', `${R} ${R}`],
    ['Mistral Large', 'Mistral Large and Mixtral 8x7B', `${R} and ${R}`],
    ['Llama 3 70B', 'Llama 3 70B Instruct', R],
    ['Meta', 'Meta released', `${R} released`],
    ['Meta AI', 'Meta AI said', `${R} said`],
    ['Cohere Command R+', 'Cohere Command R+', `${R} ${R}`],
    ['DeepSeek-V3', 'DeepSeek-V3 and deepseek-r1', `${R} and ${R}`],
    ['Deep Seek split', 'Deep Seek', R],
    ['Qwen2.5-72B-Instruct', 'Qwen2.5-72B-Instruct', R],
    ['Azure OpenAI', 'Azure OpenAI Service', `${R} ${R} Service`],
    ['Bedrock', 'AWS Bedrock', `AWS ${R}`],
    ['vLLM', 'served by vLLM', `served by ${R}`],
    ['Ollama', 'ollama run', `${R} run`],
    ['llama.cpp', 'llama.cpp server', `${R} server`],
    ['a zero-width space inside', 'Open\u200bAI', R],
    ['a soft hyphen inside', 'Cl\u00adaude', R],
    ['Phi-3', 'Phi-3 mini', R],
    // keys, secrets and tokens
    ['an API key', 'key service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx', `key ${R}`],
    ['an MCP token', 'service_mcp_AbCdEfGhIjKlMnOpQrStUvWxYz012345', R],
    ['an sk- key', 'sk-proj-Abc123Def456Ghi789', R],
    ['an sk-ant key', 'x=sk-ant-api03-abcdefghijklmnopqrst', `x=${R}`],
    ['a Bearer token', 'Authorization: Bearer abc.def-123_456', `Authorization: ${R}`],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N', R],
    ['an AWS key id', 'AKIAIOSFODNN7EXAMPLE', R],
    ['an AWS secret', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', R],
    ['a long hex secret', 'sig 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', `sig ${R}`],
    ['a long base64url secret', 'tok dGhpcyBpcyBhIHZlcnkgc2VjcmV0IHRva2VuIDEyMzQ1Ng', `tok ${R}`],
    ['a password assignment', 'password=hunter22!', R],
    ['an apiKey in JSON text', '{"apiKey": "abcd1234efgh"}', `{"${R}"}`],
    ['a database URL', 'postgres://app:pw@db:5432/main', R],
    ['credentials in a URL', 'https://user:pa55@example.com/x', `${R}example.com/x`],
    // internal hosts and paths
    ['a private IPv4 with port', 'connect ECONNREFUSED 10.0.3.7:5432.', `connect ECONNREFUSED ${R}.`],
    ['192.168.x.x', 'gw 192.168.1.254', `gw ${R}`],
    ['172.16-31.x.x', 'at 172.20.0.2 now', `at ${R} now`],
    ['loopback', 'http://127.0.0.1:8080/v1', `http://${R}/v1`],
    ['IPv6 loopback and link-local', '::1 and fe80::1%eth0', `${R} and ${R}`],
    ['IPv6 unique local', 'fd12:3456:789a::1', R],
    ['localhost', 'http://localhost:11434/api', `http://${R}/api`],
    ['*.internal', 'metadata.google.internal', R],
    ['*.svc.cluster.local', 'redis-master.default.svc.cluster.local:6379', R],
    ['*.local', 'printer.local', R],
    ['/home path', 'read /home/alice/.ssh/id_rsa', `read ${R}`],
    ['/var path', 'log at /var/log/app.log', `log at ${R}`],
    ['a macOS path', '/Users/bob/dev/x.ts', R],
    ['a Windows path', 'C:\\Users\\bob\\secrets.txt', R],
    ['a UNC path', '\\\\fileserver\\share\\x', R],
    ['a home-relative path', '~/.aws/credentials', R],
    ['a file URL', 'file:///etc/passwd', R],
    // stack traces and error dumps
    ['a JS frame', '    at handler (/app/src/routes/run.ts:42:13)', `    ${R}`],
    ['an async frame', 'at async Promise.all (index 0)', R],
    ['a bare frame', 'at /app/dist/index.js:1:2', R],
    ['a node internal frame', 'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)', R],
    ['a JVM frame', 'at com.example.Api.call(Api.java:42)', R],
    ['a Python frame', 'File "/srv/app/main.py", line 12, in run', R],
    ['an error line', 'TypeError: Cannot read properties of undefined\nnext', `${R}\nnext`],
    ['an error with a code', 'Error [ERR_HTTP_HEADERS_SENT]: headers sent', R],
    ['an error mid-line', 'failed: RangeError: too deep', `failed: ${R}`],
  ])('%s', (_name, input, want) => {
    expect(redactText(input)).toBe(want);
  });

  it('removes a whole stack dump', () => {
    const dump = [
      'Error: upstream 429 from api.openai.com',
      '    at OpenAI.makeRequest (/app/node_modules/openai/core.js:1:2)',
      '    at async Engine.run (/app/src/engine.ts:10:5)',
    ].join('\n');
    expect(redactText(dump)).toBe([R, `    ${R}`, `    ${R}`].join('\n'));
  });
});

describe('redactText keeps', () => {
  it.each([
    ['the aliases', 'Prelude, Sonata, Symphony and Concerto'],
    ['aliases in any case', 'PRELUDE sonata SyMpHoNy concerto'],
    ['aliases next to punctuation', '"Sonata"/(Concerto)-Prelude_Symphony.'],
    ['words that contain a bounded name', 'metadata, metal, coherent, coherence, googly? no: metaphor'],
    ['the service routes', 'GET /runs/run_AbC123dEf456GhI789 and POST /v1/inference'],
    ['identifiers', 'run_AbCdEfGhIjKlMnOpQrSt wksp_AbCdEfGhIjKlMnOpQrSt req_AbCdEfGhIjKlMnOpQrStUvWx'],
    ['a key prefix', 'service_sk_live_AbC123'],
    ['a UUID', '550e8400-e29b-41d4-a716-446655440000'],
    ['a timestamp', '2026-11-22T05:38:18.000Z'],
    ['a public address', '203.0.113.9 and 8.8.8.8'],
    ['a version number', 'v10.0.0.1 and 1.2.3'],
    ['prose with "at"', 'We meet at noon (or at 13:00) at the office.'],
    ['prose with "error"', 'There was an error: the file is missing.'],
    ['the bearer of news', 'the bearer of good news'],
    ['scopes', 'orchestrator:invoke:agent:sales'],
    ['a public hostname with local inside', 'files.local.example.com'],
    ['emoji with zero-width joiners', 'family \u{1F468}\u200d\u{1F469}\u200d\u{1F467}'],
    ['an email', 'ana@example.com'],
    ['a hex of 31 characters', '0123456789abcdef0123456789abcde'],
    // Found by the contract fuzzer: a header name "5j4pu--o4" lost its "o4". An o-series token joined to an
    // identifier by "-" or "_" is part of that identifier, not a model name.
    ['o-series letters inside a hyphenated identifier', 'X-Sig--o4 and build_o3'],
    // Found in the delivery log, which shows a signature's first characters: "v1,O9/lRyDkOlc4…" lost its "O9". Letters
    // and digits joined by "/" or "+" are base64 (a signature, a key), not a model name.
    ['o-series letters inside base64', 'v1,O9/lRyDkOlc4… and v1,Ab+o3/Kx9… and v1,Zk/o4…'],
  ])('%s', (_name, input) => {
    expect(redactText(input)).toBe(input);
  });
});

describe('redactValue', () => {
  it('redacts every string deeply and keeps keys and other values', () => {
    const value = {
      gpt: 'ok',
      content: 'Claude says hi',
      usage: { inputTokens: 3, outputTokens: 4 },
      nested: [{ reason: 'ECONNREFUSED 10.0.0.1' }, null, true, 'sk-abcdefghijklmnop1234'],
    };
    expect(redactValue(value)).toEqual({
      gpt: 'ok',
      content: `${R} says hi`,
      usage: { inputTokens: 3, outputTokens: 4 },
      nested: [{ reason: `ECONNREFUSED ${R}` }, null, true, R],
    });
  });

  it('leaves the values it is told to keep', () => {
    const secret = 'service_sk_live_AbCdEfGhIjKlMnOpQrStUvWx';
    const body = { secret, note: `copy ${secret}` };
    expect(redactValue(body, { keep: new Set([secret]) })).toEqual({ secret, note: `copy ${R}` });
  });

  it('does not change its input', () => {
    const value = { a: ['OpenAI'] };
    redactValue(value);
    expect(value).toEqual({ a: ['OpenAI'] });
  });
});

describe('createStreamRedactor', () => {
  function run(fragments: string[]) {
    const redactor = createStreamRedactor();
    const outputs = fragments.map((fragment) => redactor.push(fragment));
    outputs.push(redactor.end());
    return outputs;
  }

  it.each([
    ['a name split in two', ['I use Open', 'AI daily. '], ['I use ', `${R} daily. `, '']],
    ['a name split letter by letter', ['C', 'l', 'a', 'u', 'd', 'e', ' ok'], ['', '', '', '', '', '', `${R} `, 'ok']],
    ['a version split off', ['gpt', '-4', 'o is', ' here'], ['', '', `${R} `, 'is ', 'here']],
    ['a key split in three', ['k service_sk_', 'live_AbCdEfGhIjKl', 'MnOpQrStUvWx.'], ['k ', '', `${R}.`, '']],
    ['a frame split across lines', ['ok\n    at fn (/app/x', '.ts:1:2)\ndone'], ['ok\n    ', `${R}\n`, 'done']],
    ['the end of the text deciding', ['token gpt'], ['token ', R]],
  ])('%s', (_name, fragments, want) => {
    expect(run(fragments)).toEqual(want);
  });

  it('sends settled text at once: only a possible-match tail is held', () => {
    const redactor = createStreamRedactor();
    expect(redactor.push('Hello world. ')).toBe('Hello world. ');
    expect(redactor.push('The Sonata alias answers')).toBe('The Sonata alias ');
    expect(redactor.push(' quickly.\n')).toBe('answers quickly.\n');
    expect(redactor.end()).toBe('');
  });

  it('never sends half of a surrogate pair', () => {
    const redactor = createStreamRedactor();
    const emoji = '\u{1F600}';
    expect(redactor.push(`hi ${emoji[0]}`)).toBe('hi ');
    expect(redactor.push(`${emoji[1]} `)).toBe(`${emoji} `);
  });

  it('matches the one-shot redaction over a long undecided tail', () => {
    const text = `start ${'aB3'.repeat(1500)} end Claude ${'x'.repeat(2000)}\n`;
    const redactor = createStreamRedactor();
    let out = '';
    for (let i = 0; i < text.length; i += 7) out += redactor.push(text.slice(i, i + 7));
    out += redactor.end();
    expect(out).toBe(redactText(text));
    expect(out).toBe(`start ${R} end ${R} ${'x'.repeat(2000)}\n`);
  });
});

describe('hostile shapes', () => {
  it('replaces nesting past 256 levels whole instead of overflowing the stack', () => {
    let deep: unknown = 'OpenAI';
    for (let i = 0; i < 10_000; i += 1) deep = [deep];
    let out = redactValue(deep);
    let depth = 0;
    while (Array.isArray(out)) {
      out = out[0];
      depth += 1;
    }
    expect({ depth, out }).toEqual({ depth: 256, out: R });
    expect(redactValue({ a: [{ b: 'OpenAI' }] })).toEqual({ a: [{ b: R }] });
  });

  it('redacts a 500,000-character fragment of near-matches in one stream as in one pass (it used to rescan it quadratically)', () => {
    for (const text of [`${'a-'.repeat(250_000)}!!!!`, 'goroutine 1 ['.repeat(38_000), `x${'Ab1'.repeat(150_000)}`]) {
      const stream = createStreamRedactor();
      const out = stream.push(text) + stream.push(' and OpenAI') + stream.end();
      expect(out).toBe(redactText(`${text} and OpenAI`));
    }
  });
});
