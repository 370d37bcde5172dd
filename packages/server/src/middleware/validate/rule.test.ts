import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { brokenRule } from './rule.ts';

/** The rule the first issue of `schema` on `value` names. */
function ruleOf(schema: z.ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a failure');
  return brokenRule(result.error.issues[0]!);
}

describe('the rule a value broke, in the contract’s terms', () => {
  it.each([
    ['an enum', z.enum(['normal', 'low']), 'fast', 'must be one of normal, low'],
    ['a literal', z.literal('approved'), 'maybe', 'must be approved'],
    [
      'a long enum, not spelled out',
      z.enum(Array.from({ length: 40 }, (_, i) => `audit_action_${i}.changed`) as [string, ...string[]]),
      'x',
      'must be one of the 40 values the contract lists',
    ],
    ['a type', z.boolean(), 'yes', 'must be true or false'],
    ['an array type', z.array(z.string()), 'x', 'must be an array'],
    ['a minimum', z.int().min(1), 0, 'must be at least 1'],
    ['a maximum', z.int().max(32000), 32001, 'must be at most 32000'],
    ['an exclusive minimum', z.number().gt(0), 0, 'must be greater than 0'],
    ['a string that must not be empty', z.string().min(1), '', 'must not be empty'],
    ['a long string', z.string().max(200), 'x'.repeat(201), 'must be at most 200 characters'],
    ['a short string', z.string().min(8), 'x', 'must be at least 8 characters'],
    ['too few items', z.array(z.string()).min(1), [], 'must hold at least 1 item'],
    ['too many items', z.array(z.string()).max(100), Array(101).fill('x'), 'must hold at most 100 items'],
    ['a pattern, as the contract writes it', z.string().regex(/^[0-9]{6}$/), '12ab56', 'must match the pattern ^[0-9]{6}$'],
    ['a pattern too long to quote', z.string().regex(new RegExp(`^(${'a|'.repeat(80)}b)$`)), 'c', 'must match the pattern the contract sets'],
    ['an email', z.email(), 'not-an-address', 'must be an email address'],
    ['a URL', z.url(), 'not a url', 'must be a URL'],
    ['a union', z.union([z.literal('a'), z.int()]), 'b', 'must take one of the forms the contract allows'],
  ])('%s', (_, schema, value, rule) => {
    expect(ruleOf(schema, value)).toBe(rule);
  });

  it('never repeats the value sent', () => {
    for (const [schema, value] of [
      [z.enum(['a', 'b']), 'secret-value'],
      [z.string().max(3), 'secret-value'],
      [z.string().regex(/^[a-z]{3}$/), 'secret-value'],
      [z.int(), 'secret-value'],
    ] as const) {
      expect(ruleOf(schema, value)).not.toContain('secret');
    }
  });

  it('says nothing for a rule it cannot name in the contract’s terms', () => {
    const refined = z.object({ a: z.string().optional() }).refine((v) => Object.keys(v).length >= 1, { message: 'internal words' });
    expect(ruleOf(refined, {})).toBeUndefined();
  });
});
