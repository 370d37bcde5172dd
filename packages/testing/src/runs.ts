/**
 * @module Test support: a run to start, as domain/spending's statements take it (`StartingRun`): a fresh id,
 * the `sales` agent on Prelude called through the API, no conversation, no request preview, a lease of a minute.
 * Suites spread it and add what they measure (the quota, the tokens, the limits).
 */
import type { StartingRun } from '../../server/src/domain/spending/queries.ts';
import { newId } from '../../server/src/random.ts';

export function startingRun(workspaceId: string, now: Date, more: Partial<StartingRun> = {}): StartingRun {
  return {
    workspaceId,
    runId: newId('run'),
    adopt: false,
    now,
    leaseUntil: new Date(now.getTime() + 60_000),
    agentSlug: 'sales',
    answeredBy: 'sales',
    alias: 'Prelude',
    source: 'api',
    conversationId: null,
    conversationTurns: null,
    requestPreview: null,
    ...more,
  };
}
