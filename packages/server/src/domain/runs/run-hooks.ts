/**
 * @module Run hooks: what other folders do when a run ends or is interrupted, inside the transaction
 * that ends it. The run service owns a run's life; a folder that keeps something per run (inbound
 * ingestion keeps the rendered input of a webhook's run) registers a hook here instead of the run
 * service calling into it, so `domain/runs` imports nothing above it.
 *
 * Hooks are process-wide (the composition root registers them once, through the service that needs
 * them); registering the same function again is a no-op.
 */
import type { Tx } from '../../store/db.ts';

/** The run a hook is told about. */
export interface EndedRun {
  readonly runId: string;
  readonly workspaceId: string;
  /** The run's `source` (`api`, `panel`, `mcp`, `inbound_webhook`), as stored. */
  readonly source: string;
}

/** Called in the run's closing transaction (`tx`) once the run is terminal (completed, failed or canceled). */
type RunEndedHook = (tx: Tx, run: EndedRun) => Promise<void>;

/**
 * The run sources a hook is about (all when absent). A run whose source no hook is about closes in
 * one statement, without a transaction around it (close.ts).
 */
type HookSources = readonly string[] | undefined;

/**
 * Called in the sweeper's transaction for a run whose instance died, before it fails as `interrupted`.
 * Answers true when it queued the run for another hand-over (the run then stays `in_progress`).
 */
type RunInterruptedHook = (tx: Tx, run: EndedRun) => Promise<boolean>;

/** A set of hooks: the process has one ({@link onRunEnded} and the others below); a test can make its own. */
export function createRunHooks() {
  const ended = new Map<RunEndedHook, HookSources>();
  const interrupted = new Set<RunInterruptedHook>();
  return {
    /** Registers a hook called whenever a run (of one of `sources`, or any) ends. */
    onRunEnded(hook: RunEndedHook, sources?: readonly string[]): void {
      if (!ended.has(hook)) ended.set(hook, sources);
    },
    /** Whether a run of this source has any run-ended hook to call. */
    hasRunEndedHooks(source: string): boolean {
      for (const sources of ended.values()) if (!sources || sources.includes(source)) return true;
      return false;
    },
    /** Registers a hook that may hand an interrupted run over again. */
    onRunInterrupted(hook: RunInterruptedHook): void {
      interrupted.add(hook);
    },
    /** Tells every ended-run hook, in registration order, in the closing transaction. */
    async runEnded(tx: Tx, run: EndedRun): Promise<void> {
      for (const [hook, sources] of ended) if (!sources || sources.includes(run.source)) await hook(tx, run);
    },
    /** True when a hook queued the interrupted run again (the first that does wins). */
    async runInterrupted(tx: Tx, run: EndedRun): Promise<boolean> {
      for (const hook of interrupted) if (await hook(tx, run)) return true;
      return false;
    },
  };
}

const processHooks = createRunHooks();

export const { onRunEnded, onRunInterrupted, runEnded, runInterrupted, hasRunEndedHooks } = processHooks;
