/**
 * How the Runs list shows a run's status: a run that waits for an approval is "waiting for approval" (with the action
 * to decide), not a plain "in progress"; every other run shows its status.
 */
import { describe, expect, it } from 'vitest';
import { shownStatus } from './run-status.ts';

const waitingFor = { id: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb', action: 'email.send', summary: 'Send the renewal email to Dana.', expiresAt: '2026-11-25T09:14:03Z' };

describe('a run’s status in the Runs list', () => {
  it('marks a run waiting for an approval, with the action to decide', () => {
    expect(shownStatus({ status: 'in_progress', waitingFor })).toEqual({ label: 'waiting for approval', tone: 'amber', waitingOn: 'email.send' });
  });

  it('shows every other run’s status as it is', () => {
    expect(shownStatus({ status: 'in_progress' })).toEqual({ label: 'in progress', tone: 'blue' });
    expect(shownStatus({ status: 'completed' })).toEqual({ label: 'completed', tone: 'green' });
    expect(shownStatus({ status: 'failed' })).toEqual({ label: 'failed', tone: 'red' });
    expect(shownStatus({ status: 'canceled' })).toEqual({ label: 'canceled', tone: 'grey' });
  });
});
