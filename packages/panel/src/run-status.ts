/**
 * @module How a run's status is shown in the Runs list: its status, or, for a run that waits for a person's approval
 * (`in_progress` with `waitingFor`), "waiting for approval" with the action to decide.
 */
import type { Schemas } from './api.ts';

export interface ShownStatus {
  label: string;
  /** The badge's colour (ui.tsx `Badge`). */
  tone: 'blue' | 'green' | 'red' | 'grey' | 'amber';
  /** The action the run waits for a decision on, when it waits. */
  waitingOn?: string;
}

const TONES: Record<Schemas['RunStatus'], ShownStatus['tone']> = { in_progress: 'blue', completed: 'green', failed: 'red', canceled: 'grey' };

export function shownStatus(run: Pick<Schemas['Run'], 'status' | 'waitingFor'>): ShownStatus {
  if (run.status === 'in_progress' && run.waitingFor) return { label: 'waiting for approval', tone: 'amber', waitingOn: run.waitingFor.action };
  return { label: run.status.replace('_', ' '), tone: TONES[run.status] };
}
