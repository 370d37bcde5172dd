/**
 * @module What a close leaves out until it is needed (store/functions/finish_runs.sql): its prepared events with their
 * delivery ids, and a log that is only its answer. Most closes need neither: a workspace without a destination that
 * takes a run's events writes none, and a completed run's answer is in its row. When the outcome needs what was left
 * out, the closing statement raises `close_needs_events` or `close_needs_log` (nothing of it is committed) and close.ts
 * sends the close again whole.
 *
 * Whether a workspace's closes go with their events is read from the store on its first close here, then kept: a
 * destination added since (on any instance) makes a close that left them out ask for them, and the workspace's closes
 * go whole from then on. One removed since only leaves them whole, as every close went before.
 */
import type { Db } from '../../store/db.ts';
import type { WorkspaceEventType } from '../webhooks/envelope.ts';
import { destinationsTakeAny } from './queries/close.ts';

/** The events a close may write: a destination that takes one of them gets a workspace's closes whole. */
export const CLOSE_EVENT_TYPES: readonly WorkspaceEventType[] = ['run.completed', 'run.failed', 'draft.created'];

export interface CloseDetail {
  /** Whether the workspace's closes go with their events. */
  takesEvents(workspaceId: string): boolean | Promise<boolean>;
  /** The workspace's closes need their events (a close that left them out was asked for them). */
  learn(workspaceId: string): void;
}

/** Workspaces kept at most; past it the first one kept is forgotten (read again at its next close). */
export const CLOSE_DETAIL_WORKSPACES = 10_000;

export function createCloseDetail(db: Db, max = CLOSE_DETAIL_WORKSPACES): CloseDetail {
  const known = new Map<string, boolean>();
  const keep = (workspaceId: string, takes: boolean) => {
    known.delete(workspaceId);
    if (known.size >= max) known.delete(known.keys().next().value!);
    known.set(workspaceId, takes);
  };
  return {
    takesEvents(workspaceId) {
      const takes = known.get(workspaceId);
      if (takes !== undefined) return takes;
      return destinationsTakeAny(db, workspaceId, CLOSE_EVENT_TYPES).then((read) => {
        // A close that asked meanwhile wins over what this read found.
        if (!known.has(workspaceId)) keep(workspaceId, read);
        return known.get(workspaceId)!;
      });
    },
    learn: (workspaceId) => keep(workspaceId, true),
  };
}

/** What the closing statement asked for, when its error is that. */
export function closeNeeds(err: unknown): 'events' | 'log' | null {
  if (!(err instanceof Error)) return null;
  if (err.message.includes('close_needs_events')) return 'events';
  if (err.message.includes('close_needs_log')) return 'log';
  return null;
}
