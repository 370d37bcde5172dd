/**
 * @module The resumer: takes up runs that waited for an approval once it is decided or expired
 * (domain/runs/resume.ts), on whichever instance claims each first.
 *
 * - It hears decisions on the store's notification bus (`APPROVAL_DECIDED_CHANNEL`, sent by the decision's own
 *   transaction: store/listen.ts, PostgreSQL's LISTEN shared by every instance; PGlite's own with the embedded
 *   store), so an instance resumes the run promptly wherever the decision was taken.
 * - It claims every `pollMs` too, which catches a lost notification (the listener was reconnecting), the
 *   approvals that expire (nobody decides them: no notification), and the claims whose instance stopped before
 *   it reserved (given back after a lease, `releaseLostClaims`).
 * - Each claim that resumes a run calls `resume` (the agent loop's continuation), up to `concurrency` at once;
 *   it is not awaited by the pass. A continuation that throws is logged: the run holds a lease, and the sweeper
 *   makes it resumable again once that lease runs out.
 */
import { fallbackLogger } from '../log/index.ts';
import { APPROVAL_DECIDED_CHANNEL } from '../domain/approvals/decision.ts';
import type { ClaimOutcome, ResumeRun } from '../domain/runs/resume.ts';
import type { Db } from '../store/db.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { asStoreParty, BACKGROUND_PARTY, workspaceParty } from '../store/fair-queue.ts';

export interface ResumerOptions {
  db: Db;
  /** One claim (resume.ts `claimResumption`, with this instance's name). */
  claim: () => Promise<ClaimOutcome | undefined>;
  /** Gives back claims whose instance stopped before their reservation (resume.ts `releaseLostClaims`). */
  releaseLostClaims?: () => Promise<unknown>;
  /** The continuation of a resumed run. */
  resume: ResumeRun;
  /** Time between claims without a notification (the expiries, lost notifications): 5 s. */
  pollMs?: number;
  /** Continuations running at once on this instance: 16. */
  concurrency?: number;
  /** Each claim's outcome (tests, logs). */
  onOutcome?: (outcome: ClaimOutcome) => void;
  logError?: (error: unknown) => void;
}

export interface Resumer {
  /** Claims what is resumable now, until nothing is (or the continuations fill `concurrency`). */
  pass(): Promise<void>;
  /** Resolves once no pass and no continuation started here is under way. */
  idle(): Promise<void>;
  /** Stops claiming; waits for the continuations under way. */
  stop(): Promise<void>;
}

const DEFAULT_POLL_MS = 5_000;
const DEFAULT_CONCURRENCY = 16;

export async function startResumer(options: ResumerOptions): Promise<Resumer> {
  const logError = options.logError ?? ((error: unknown) => fallbackLogger().error({ err: error }, 'resumer failed'));
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const running = new Set<Promise<void>>();
  let stopped = false;

  // Its claims are the background party's in the store's fair queue, whoever woke it (a notification heard in a
  // request's context); each continuation runs as its run's workspace, as the run's first execution did.
  const pass = oneAtATime(() => asStoreParty(BACKGROUND_PARTY, claimAll));
  async function claimAll(): Promise<void> {
    if (stopped) return;
    await options.releaseLostClaims?.();
    while (!stopped && running.size < concurrency) {
      const outcome = await options.claim();
      if (!outcome) return;
      options.onOutcome?.(outcome);
      // Given back for now (budget held by runs in progress): the next pass tries again.
      if (outcome.kind === 'later') return;
      if (outcome.kind !== 'resumed') continue;
      const { resumption } = outcome;
      const done: Promise<void> = asStoreParty(workspaceParty(resumption.checkpoint.workspaceId), () => options.resume(resumption))
        .catch(logError)
        .finally(() => {
          running.delete(done);
          if (!stopped) wake();
        });
      running.add(done);
    }
  }
  const wake = () => {
    if (!stopped) pass().catch(logError);
  };

  await options.db.listen?.(APPROVAL_DECIDED_CHANNEL, {
    message: wake,
    // Listening (again): what was decided meanwhile is claimed now.
    state: (up) => {
      if (up) wake();
    },
  });
  const timer = setInterval(wake, options.pollMs ?? DEFAULT_POLL_MS);
  timer.unref?.();
  wake();

  async function idle(): Promise<void> {
    for (;;) {
      const busy = [...running, pass.current].filter((p) => p !== undefined);
      if (busy.length === 0) return;
      await Promise.allSettled(busy);
    }
  }

  return {
    pass: () => pass(),
    idle,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await idle();
    },
  };
}
