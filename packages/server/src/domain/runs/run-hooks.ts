/**
 * @module Run hooks: what other folders do when a run ends or is interrupted, inside the transaction
 * that ends it. The run service owns a run's life; a folder that keeps something per run (inbound
 * ingestion keeps the rendered input of a webhook's run) registers a hook here instead of the run
 * service calling into it, so `domain/runs` imports nothing above it.
 *
 * Hooks are process-wide (the composition root registers them once, through the service that needs
 * them); registering the same function again is a no-op.
 */
import type { Db } from '../../store/db.ts';

/** The run a hook is told about. */
export interface EndedRun {
  readonly runId: string;
  readonly workspaceId: string;
  /** The run's `source` (`api`, `panel`, `mcp`, `inbound_webhook`), as stored. */
  readonly source: string;
}

/** Called in the run's closing transaction (`tx`) once the run is terminal (completed, failed or canceled). */
type RunEndedHook = (tx: Db, run: EndedRun) => Promise<void>;

/**
 * Called in the sweeper's transaction for a run whose instance died, before it fails as `interrupted`.
 * Answers true when it queued the run for another hand-over (the run then stays `in_progress`).
 */
type RunInterruptedHook = (tx: Db, run: EndedRun) => Promise<boolean>;

const endedHooks = new Set<RunEndedHook>();
const interruptedHooks = new Set<RunInterruptedHook>();

/** Registers a hook called whenever a run ends. */
export function onRunEnded(hook: RunEndedHook): void {
  endedHooks.add(hook);
}

/** Registers a hook that may hand an interrupted run over again. */
export function onRunInterrupted(hook: RunInterruptedHook): void {
  interruptedHooks.add(hook);
}

/** Tells every ended-run hook, in registration order, in the closing transaction. */
export async function runEnded(tx: Db, run: EndedRun): Promise<void> {
  for (const hook of endedHooks) await hook(tx, run);
}

/** True when a hook queued the interrupted run again (the first that does wins). */
export async function runInterrupted(tx: Db, run: EndedRun): Promise<boolean> {
  for (const hook of interruptedHooks) if (await hook(tx, run)) return true;
  return false;
}
