import { describe, expect, it } from 'vitest';
import { checkTemplate, createTemplateRenderer, MAX_AGENT_INPUT_CHARS, parseInboundPayload, PayloadInvalidError } from './template.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const PAYLOAD = {
  event: 'contact.created',
  id: 'c_1',
  occurred_at: '2026-11-22T06:00:00Z',
  contact: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null, company: 'Analytical' },
  source: 'crm',
  tags: ['vip', 'new'],
};

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<PayloadInvalidError | undefined> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (error instanceof PayloadInvalidError) return error;
    throw error;
  }
  return undefined;
}

describe('parseInboundPayload', () => {
  it('parses JSON from the raw bytes', () => {
    expect(parseInboundPayload(encode(JSON.stringify(PAYLOAD)))).toEqual(PAYLOAD);
  });

  const bad: [string, Uint8Array, string][] = [
    ['invalid JSON', encode('{"event": '), 'invalid_json'],
    ['an empty body', encode(''), 'invalid_json'],
    ['invalid UTF-8', new Uint8Array([0x22, 0xff, 0x22]), 'invalid_utf8'],
  ];
  it.each(bad)('refuses %s with 400 payload_invalid', async (_name, raw, reason) => {
    const error = await failure(() => parseInboundPayload(raw));
    expect(error?.code).toBe('payload_invalid');
    expect(error?.status).toBe(400);
    expect(error?.reason).toBe(reason);
    expect(error?.publicMessage).toBe('The body is not valid JSON.');
  });
});

describe('createTemplateRenderer', () => {
  const render = createTemplateRenderer();

  it('renders top-level fields and the whole payload', async () => {
    const template = 'New {{ event }} from {{ source }}: {{ contact.name }} <{{ contact.email }}> tags={{ tags | join: "," }} n={{ payload.tags | size }}';
    expect(await render(template, PAYLOAD)).toBe('New contact.created from crm: Ada Lovelace <ada@example.com> tags=vip,new n=2');
  });

  it('uses a compact JSON dump of the body when no template is configured', async () => {
    expect(await render(null, PAYLOAD)).toBe(JSON.stringify(PAYLOAD));
    expect(await render('', [1, 2])).toBe('[1,2]');
    expect(await render(undefined, 'just text')).toBe('"just text"');
  });

  it('lets a template guard optional fields with if and default', async () => {
    const template = '{% if contact.phone %}call {{ contact.phone }}{% else %}no phone{% endif %}, {{ contact.fax | default: "no fax" }}';
    expect(await render(template, PAYLOAD)).toBe('no phone, no fax');
  });

  it('does not HTML-escape (the output is agent text, not a page)', async () => {
    expect(await render('{{ q }}', { q: '<b>"x" & y</b>' })).toBe('<b>"x" & y</b>');
  });

  it('exposes a non-object payload as payload only', async () => {
    expect(await render('{{ payload | size }} items', [1, 2, 3])).toBe('3 items');
  });

  const refused: [string, string, unknown][] = [
    ['a field the payload lacks (strict variables)', 'Hello {{ contact.nickname }}', PAYLOAD],
    ['an unknown filter (strict filters)', '{{ event | shout }}', PAYLOAD],
    ['an include (no file system)', '{% include "secrets.liquid" %}', PAYLOAD],
    ['a render of a system file', "{% render '/etc/passwd' %}", PAYLOAD],
    ['a layout', '{% layout "base" %}', PAYLOAD],
    ['prototype access', '{{ contact.constructor.name }}', PAYLOAD],
    ['a syntax error', '{% if event %}unclosed', PAYLOAD],
    ['output that is blank', '{% if contact.phone %}x{% endif %}  ', PAYLOAD],
    ['a loop bomb (render cap)', '{% for i in (1..1000) %}{% for j in (1..1000) %}.{% endfor %}{% endfor %}', PAYLOAD],
    [
      'a doubling string (allocation cap)',
      '{% assign s = "xxxxxxxx" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}',
      PAYLOAD,
    ],
  ];
  it.each(refused)('refuses %s with 400 payload_invalid and a generic message', async (_name, template, payload) => {
    const error = await failure(render(template, payload));
    expect(error?.code).toBe('payload_invalid');
    expect(error?.status).toBe(400);
    expect(error?.publicMessage).toBe("The payload could not be turned into the agent's input by the webhook's template.");
  });

  const budgets: [string, string, unknown, string][] = [
    ['a nested range loop', '{% for i in (1..1000) %}{% for j in (1..1000) %}.{% endfor %}{% endfor %}', PAYLOAD, 'render count'],
    [
      'nested loops over a payload array',
      '{% for a in xs %}{% for b in xs %}{% for c in xs %}{{ c }}{% endfor %}{% endfor %}{% endfor %}',
      { xs: Array.from({ length: 100 }, (_, i) => i) },
      'render count',
    ],
    ['a doubling string', '{% assign s = "xxxxxxxx" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}', PAYLOAD, 'memory'],
  ];
  it.each(budgets)('stops %s on the deterministic budget, not the clock', async (_name, template, payload, limit) => {
    const error = await failure(render(template, payload));
    expect(error?.reason).toBe('template_error');
    expect(error?.detail).toContain(limit);
  });

  it('renders a loop that stays inside the budget', async () => {
    const xs = Array.from({ length: 300 }, (_, i) => i);
    expect(await render('{% for x in xs %}{{ x }},{% endfor %}', { xs })).toBe(xs.map((x) => `${x},`).join(''));
  });

  it('refuses output over the agent input limit (500,000 characters)', async () => {
    const big = { text: 'x'.repeat(MAX_AGENT_INPUT_CHARS) };
    expect(await render('{{ text }}', big)).toHaveLength(MAX_AGENT_INPUT_CHARS);
    expect((await failure(render('{{ text }}!', big)))?.reason).toBe('output_too_long');
    expect((await failure(render(null, big)))?.reason).toBe('output_too_long');
  });

  it('keeps the engine detail for the audit log only', async () => {
    const error = await failure(render('{{ missing_field }}', PAYLOAD));
    expect(error?.reason).toBe('template_error');
    expect(error?.detail).toContain('missing_field');
    expect(error?.publicMessage).not.toContain('missing_field');
  });

  it('applies configured budgets', async () => {
    const tight = createTemplateRenderer({ maxOutputChars: 5 });
    expect(await tight('{{ source }}', PAYLOAD)).toBe('crm');
    expect((await failure(tight('{{ event }}', PAYLOAD)))?.reason).toBe('output_too_long');
  });
});

describe('checkTemplate', () => {
  it('accepts a template that parses and names why one does not', () => {
    expect(checkTemplate('Hi {{ contact.name }}')).toBeUndefined();
    expect(checkTemplate('{% include "x" %}')).toContain('include');
    expect(checkTemplate('{{ x | nope }}')).toContain('nope');
    expect(checkTemplate('x'.repeat(20_001))).toContain('longer');
  });
});
