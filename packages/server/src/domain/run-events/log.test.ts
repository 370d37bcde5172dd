import { describe, expect, it } from 'vitest';
import { answerLog, answerOnly, type ExecutionEvent, FIRST_EXECUTION_SEQUENCE, SEQUENCES_PER_EXECUTION } from './log.ts';

const at = '2026-11-30T03:00:00.000Z';
const delta = (sequence: number, text: string): ExecutionEvent => ({ sequence, type: 'text.delta', runId: 'run_a', at, delta: text });

describe('a log that is only its answer', () => {
  it('is one fragment holding the whole answer, at the first execution sequence', () => {
    expect(answerOnly([delta(FIRST_EXECUTION_SEQUENCE, 'All invoices are paid.')], 'All invoices are paid.')).toBe(true);
  });

  it('is not a streamed answer, a resumed or restarted execution, an answer changed since, an empty one, or one beside other events', () => {
    expect(answerOnly([delta(3, 'All invoices '), delta(4, 'are paid.')], 'All invoices are paid.')).toBe(false);
    expect(answerOnly([delta(6, 'Approved.')], 'Approved.')).toBe(false);
    expect(answerOnly([delta(SEQUENCES_PER_EXECUTION + FIRST_EXECUTION_SEQUENCE, 'Done.')], 'Done.')).toBe(false);
    expect(answerOnly([delta(3, 'Call 555-0100.')], 'Call [redacted].')).toBe(false);
    expect(answerOnly([delta(3, '')], '')).toBe(false);
    expect(answerOnly([], '')).toBe(false);
    const handoff: ExecutionEvent = { sequence: 3, type: 'run.routed', runId: 'run_a', at, agentSlug: 'sales' };
    expect(answerOnly([handoff, delta(4, 'Found.')], 'Found.')).toBe(false);
  });

  it("is read back from a completed run's row as that fragment, at the time it completed; nothing for any other run", () => {
    const run = { id: 'run_a', status: 'completed', content: 'All invoices are paid.', completedAt: at } as const;
    expect(answerLog(run)).toEqual([delta(FIRST_EXECUTION_SEQUENCE, 'All invoices are paid.')]);
    expect(answerLog({ ...run, status: 'failed' })).toBeNull();
    expect(answerLog({ ...run, content: '' })).toBeNull();
    expect(answerLog({ ...run, content: null, completedAt: null })).toBeNull();
  });
});
