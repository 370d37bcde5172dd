/**
 * What the run page shows while it follows a run's events: the answer grows with each fragment, and a restart of the
 * run (an inbound run handed over to a new execution) drops what the first execution showed.
 */
import { describe, expect, it } from 'vitest';
import { applyRunEvent, NOT_YET_LIVE } from './live-run.ts';
import type { RunEvent } from './run-events.ts';

const runId = 'run_7Hk2Lm9QvX4pT8sW3nB6';
const at = '2026-11-22T09:14:03Z';

describe('the live run', () => {
  it('drops the first execution’s answer, tool calls, approvals and drafts at run.restarted, and keeps what follows', () => {
    const events: RunEvent[] = [
      { sequence: 1, type: 'run.created', runId, at, agentSlug: 'sales', alias: 'Sonata', source: 'inbound_webhook', conversationId: null },
      { sequence: 2, type: 'run.routed', runId, at, agentSlug: 'sales' },
      { sequence: 3, type: 'text.delta', runId, at, delta: 'A first try ' },
      { sequence: 4, type: 'tool.called', runId, at, name: 'crm.lookup', summary: 'Looked up Dana' },
      { sequence: 1_000_003, type: 'run.restarted', runId, at, attempt: 1, reason: 'interrupted' },
      { sequence: 1_000_004, type: 'text.delta', runId, at, delta: 'The answer, ' },
      { sequence: 1_000_005, type: 'text.delta', runId, at, delta: 'whole.' },
    ];
    const states = events.map((_, i) => events.slice(0, i + 1).reduce(applyRunEvent, NOT_YET_LIVE));
    expect(states[3]).toMatchObject({ answer: 'A first try ', toolCalls: [{ name: 'crm.lookup' }] });
    expect(states[4]).toMatchObject({ answer: '', toolCalls: [], approvals: [], drafts: [], routedTo: 'sales' });
    expect(states[4]!.said).toMatch(/started again/);
    expect(states[6]).toMatchObject({ answer: 'The answer, whole.', toolCalls: [] });
  });
});
