/**
 * What the run page shows while it follows a run's events: the answer grows with each fragment, a restart of the
 * run (an inbound run handed over to a new execution) drops what the first execution showed, a handoff of the
 * orchestrator's routes the run to the department, and a run that waits for an approval shows it waiting, then the
 * decision, then the run going on.
 */
import { describe, expect, it } from 'vitest';
import { applyRunEvent, type LiveRun, NOT_YET_LIVE, routedToShown, startLive } from './live-run.ts';
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

  it('follows the orchestrator’s handoffs: each run.routed names the department the run is routed to now', () => {
    const events: RunEvent[] = [
      { sequence: 1, type: 'run.created', runId, at, agentSlug: 'orchestrator', alias: 'Symphony', source: 'panel', conversationId: null },
      { sequence: 2, type: 'run.routed', runId, at, agentSlug: 'orchestrator' },
      { sequence: 3, type: 'tool.called', runId, at, name: 'handoff.finance', summary: 'Handed a part of the request to Finance.' },
      { sequence: 4, type: 'run.routed', runId, at, agentSlug: 'finance' },
    ];
    const states = events.map((_, i) => events.slice(0, i + 1).reduce(applyRunEvent, NOT_YET_LIVE));
    expect(states[1]).toMatchObject({ routedTo: 'orchestrator', said: 'orchestrator is answering.' });
    expect(states[3]).toMatchObject({ agentSlug: 'orchestrator', routedTo: 'finance', said: 'Routed to finance.' });

    // The page names the latest handoff while it follows, over what the run's record said when it was read.
    const legal = applyRunEvent(states[3]!, { sequence: 5, type: 'run.routed', runId, at, agentSlug: 'legal' });
    const read = { agentSlug: 'orchestrator', routedTo: 'finance' };
    expect(routedToShown(read, legal)).toBe('legal');
    expect(routedToShown(read, states[1])).toBe('finance');
    expect(routedToShown({ agentSlug: 'orchestrator', routedTo: null }, states[1])).toBeNull();
    expect(routedToShown(read, undefined)).toBe('finance');
    expect(routedToShown(undefined, undefined)).toBeNull();
  });

  describe('a run that waits for an approval', () => {
    const approvalId = 'apr_6Wm1Kp8Zt3Qx7Nv2Lb';
    const expiresAt = '2026-11-25T09:14:03Z';
    const head: RunEvent[] = [
      { sequence: 1, type: 'run.created', runId, at, agentSlug: 'sales', alias: 'Sonata', source: 'api', conversationId: null },
      { sequence: 2, type: 'run.routed', runId, at, agentSlug: 'sales' },
      { sequence: 3, type: 'text.delta', runId, at, delta: 'Before sending: ' },
      { sequence: 4, type: 'approval.requested', runId, at, action: 'email.send', summary: 'Send the renewal email to Dana.', approvalId, expiresAt },
    ];
    const replay = (events: RunEvent[], from: LiveRun = NOT_YET_LIVE) => events.reduce(applyRunEvent, from);
    const decided = (decision: 'approved' | 'rejected' | 'expired'): RunEvent => ({ sequence: 5, type: 'approval.decided', runId, at, approvalId, decision });

    it('waits at approval.requested, marks the approval approved at approval.decided, says the run resumed, then completes', () => {
      const waiting = replay(head);
      expect(waiting.waiting).toEqual({ approvalId, action: 'email.send', summary: 'Send the renewal email to Dana.', expiresAt });
      expect(waiting.said).toBe('Waiting for an approval: email.send.');
      expect(waiting.approvals).toMatchObject([{ approvalId, action: 'email.send' }]);
      expect(waiting.approvals[0]!.decision).toBeUndefined();

      const approved = applyRunEvent(waiting, decided('approved'));
      expect(approved.waiting).toBeUndefined();
      expect(approved.approvals).toMatchObject([{ approvalId, decision: 'approved' }]);
      expect(approved.said).toBe('Approved by a person; the run goes on.');
      expect(approved.end).toBeUndefined();

      const resumed = applyRunEvent(approved, { sequence: 6, type: 'run.resumed', runId, at, approvalId });
      expect(resumed.said).toBe('The run resumed.');
      expect(resumed.approvals).toMatchObject([{ decision: 'approved' }]);

      const done = replay(
        [
          { sequence: 7, type: 'text.delta', runId, at, delta: 'sent.' },
          { sequence: 8, type: 'run.completed', runId, at },
        ],
        resumed,
      );
      expect(done).toMatchObject({ answer: 'Before sending: sent.', waiting: undefined, said: 'The run completed.' });
    });

    it('marks a rejected or expired approval so, with a sentence for each', () => {
      const waiting = replay(head);
      const rejected = applyRunEvent(waiting, decided('rejected'));
      expect(rejected).toMatchObject({
        waiting: undefined,
        approvals: [{ decision: 'rejected' }],
        said: 'Rejected by a person; the run goes on without that action.',
      });
      const expired = applyRunEvent(waiting, decided('expired'));
      expect(expired).toMatchObject({
        waiting: undefined,
        approvals: [{ decision: 'expired' }],
        said: 'The approval expired unanswered; the run goes on without that action.',
      });
    });

    it('starts from the run’s waitingFor, before any event arrives, and keeps waiting through a replayed request', () => {
      const start = startLive({ id: approvalId, action: 'email.send', summary: 'Send the renewal email to Dana.', expiresAt });
      expect(start.waiting).toEqual({ approvalId, action: 'email.send', summary: 'Send the renewal email to Dana.', expiresAt });
      expect(startLive(undefined)).toBe(NOT_YET_LIVE);
      expect(replay(head, start).waiting?.approvalId).toBe(approvalId);
      expect(replay([...head, decided('approved')], start).waiting).toBeUndefined();
    });

    it('stops waiting when the run fails or is canceled while it waits', () => {
      const waiting = replay(head);
      expect(waiting.waiting?.approvalId).toBe(approvalId);
      const failed = applyRunEvent(waiting, { sequence: 5, type: 'run.failed', runId, at, reason: 'kill_switch', error: 'kill_switch', message: 'Stopped.' });
      expect(failed.waiting).toBeUndefined();
      const canceled = applyRunEvent(waiting, { sequence: 5, type: 'run.canceled', runId, at });
      expect(canceled.waiting).toBeUndefined();
    });
  });
});
