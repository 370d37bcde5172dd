/**
 * @module The executor of runs started by inbound webhooks (see src/worker/inbound-runs.ts): the
 * ingestion already inserted the run `in_progress`; the run service adopts it, with the same checks
 * as an invocation (a refused run fails with the refusal's code), and executes it.
 */
import { ServiceError } from '../../errors.ts';
import { toAlias } from '../../vocabulary/alias.ts';
import type { RunService } from './service.ts';

export interface InboundRunInput {
  runId: string;
  workspaceId: string;
  agentSlug: string;
  alias: string;
  /** The agent input rendered by the webhook's template. */
  content: string;
  /** How many times the run was handed over again after its instance stopped (`runs.recoveries`); 0 when absent. */
  recoveries?: number;
}

export function inboundRunExecutor(runs: RunService, logError: (error: unknown) => void) {
  return async function executeInboundRun(run: InboundRunInput): Promise<void> {
    // Resolves once the run service adopted the run (it then holds a lease and the engine runs
    // detached), so the hand-over marks the event started only when a crash can no longer lose it.
    // A failure rejects, and the hand-over is tried again when its lease runs out. A second
    // hand-over of the same run is harmless: a run is adopted once (runs.started_at).
    try {
      await runs.createRun({
        workspaceId: run.workspaceId,
        agentSlug: run.agentSlug,
        alias: toAlias(run.alias),
        messages: [{ role: 'user', content: run.content }],
        source: 'inbound_webhook',
        existingRunId: run.runId,
        recoveries: run.recoveries,
      });
    } catch (error) {
      // Runs in progress hold the room this one needs: not a failure. It waits in the queue for the
      // answer's Retry-After (the room comes back as they end), as a client of the API would.
      if (error instanceof ServiceError && error.is('budget_reserved')) {
        throw new InboundRunWaits(error.extras.retryAfterSec * 1000, error.extras.budget);
      }
      logError(error);
      throw error;
    }
  };
}

/** An inbound run that could not start yet (runs in progress hold the budget it needs): handed over again after `retryAfterMs`. */
export class InboundRunWaits extends Error {
  constructor(
    readonly retryAfterMs: number,
    /** What runs in progress hold: `quota`, `hour` or `day`. */
    readonly budget: string,
  ) {
    super(`Runs in progress hold the ${budget} budget this run needs; it waits ${retryAfterMs} ms.`);
    this.name = 'InboundRunWaits';
  }
}
