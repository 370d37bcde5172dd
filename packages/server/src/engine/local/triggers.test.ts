import { describe, expect, it } from 'vitest';
import { triggerOf, withoutTriggers } from './triggers.ts';

const user = (content: string) => ({ role: 'user' as const, content });

describe('triggers', () => {
  it.each([
    ['hello [[fail]]', 'fail'],
    ['[[fail-mid-stream]] please', 'fail-mid-stream'],
    ['[[timeout]]', 'timeout'],
    ['[[unavailable]]', null],
    ['wait [[hang]]', 'hang'],
    ['[[FAIL]]', null],
    ['[fail]', null],
    ['hello', null],
  ] as const)('%j → %s', (text, want) => {
    expect(triggerOf([user(text)])).toBe(want);
  });

  it('looks only at the latest user message', () => {
    expect(triggerOf([user('[[fail]]'), user('fine now')])).toBe(null);
    expect(triggerOf([user('fine'), { role: 'assistant', content: '[[fail]]' }])).toBe(null);
  });

  it('removes triggers from the text', () => {
    expect(withoutTriggers('Check the  [[fail-mid-stream]] budget')).toBe('Check the budget');
  });
});
