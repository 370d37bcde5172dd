/**
 * @module The usage tally: each workspace's current period (rollover and consumption) held in memory,
 * so `GET /usage/current` and `GET /v1/usage` read no row.
 *
 * Moved by the ledger's writes on every instance: a period row's insert and every change of what it
 * consumed notify `USAGE_CHANNEL` with the row's new state and its `version` (migration
 * 0507_usage_tally.sql; PostgreSQL hands the notification to every instance's listener when the
 * writing statement commits; the embedded store hears its own in process). A state replaces the one
 * held only when it is newer (a later period, or a higher version of the same one), so a late
 * notification or a slow read never moves the tally back.
 *
 * A charge made by this instance (`charged`) marks the workspace's entry stale before the run's
 * answer leaves, and a read begun before that is not kept: the next read goes to the store, so a
 * client reads its own charge even before the notification arrives. Entries are used only while the listener
 * is up: while it is down (news may be lost) every read goes to the store, and the tally starts empty
 * when it is back.
 */
import type { Db } from '../../store/db.ts';

/** Notified by the period row's triggers: `workspace period version rollover consumed`, space-separated. */
export const USAGE_CHANNEL = 'service_usage';

/** Workspaces beyond this drop the oldest first (a deployment with more active workspaces reads some). */
const MAX_ENTRIES = 10_000;

/** One workspace's period as the store last said it. */
export interface PeriodTally {
  period: string;
  version: number;
  rolloverStu: number;
  consumedStu: number;
}

export interface UsageTally {
  /** The workspace's tally of `period`: from memory while it is known current, else `read` (and kept). */
  read(workspaceId: string, period: string, read: () => Promise<PeriodTally>): Promise<PeriodTally>;
  /** This instance charged the workspace (its run closed or was settled): the entry is read again. */
  charged(workspaceId: string): void;
}

/** Whether `next` is a later state than `held`: a later period, or a higher version of the same one. */
function isNewer(next: PeriodTally, held: PeriodTally | undefined): boolean {
  if (!held) return true;
  if (next.period !== held.period) return next.period > held.period;
  return next.version > held.version;
}

/** The payload of one notification, or undefined when it is not one (ignored). */
export function parseUsageNotification(payload: string): { workspaceId: string; tally: PeriodTally } | undefined {
  const [workspaceId, period, version, rollover, consumed, extra] = payload.split(' ');
  if (!workspaceId || !period || extra !== undefined) return undefined;
  const numbers = [Number(version), Number(rollover), Number(consumed)];
  if (!numbers.every(Number.isFinite)) return undefined;
  return { workspaceId, tally: { period, version: numbers[0]!, rolloverStu: numbers[1]!, consumedStu: numbers[2]! } };
}

/** A workspace's entry: the newest state heard or read, whether a charge of this instance makes it stale, and how many. */
interface Entry {
  tally: PeriodTally | undefined;
  stale: boolean;
  charges: number;
}

export function createUsageTally(db: Db): UsageTally {
  const entries = new Map<string, Entry>();
  let listening = false;
  /** Bumped when the listener goes down or up, and when an entry is evicted: a read that began before is not kept. */
  let generation = 0;
  let subscribed: Promise<void> | undefined;
  const entryOf = (workspaceId: string): Entry => {
    let entry = entries.get(workspaceId);
    if (entry)
      entries.delete(workspaceId); // set again below, last: the map's first entry is the oldest
    else {
      entry = { tally: undefined, stale: false, charges: 0 };
      if (entries.size >= MAX_ENTRIES) {
        entries.delete(entries.keys().next().value!);
        generation += 1;
      }
    }
    entries.set(workspaceId, entry);
    return entry;
  };
  const subscribe = () =>
    db
      .listen?.(USAGE_CHANNEL, {
        message: (payload) => {
          const news = parseUsageNotification(payload);
          if (!news || !listening) return;
          const entry = entryOf(news.workspaceId);
          if (isNewer(news.tally, entry.tally)) entry.tally = news.tally;
        },
        state: (up) => {
          listening = up;
          generation += 1;
          entries.clear();
        },
      })
      .catch(() => {});
  return {
    async read(workspaceId, period, read) {
      // The first read waits for the listener (once), so what it reads can be kept.
      await (subscribed ??= subscribe() ?? Promise.resolve());
      const held = listening ? entries.get(workspaceId) : undefined;
      if (held && !held.stale && held.tally?.period === period) return held.tally;
      const started = generation;
      const charges = held?.charges ?? 0;
      const tally = await read();
      // Kept unless this instance charged the workspace (or lost its news) while the store answered.
      if (listening && started === generation && (entries.get(workspaceId)?.charges ?? 0) === charges) {
        const entry = entryOf(workspaceId);
        if (isNewer(tally, entry.tally)) entry.tally = tally;
        entry.stale = false;
      }
      return tally;
    },
    charged(workspaceId) {
      const entry = entryOf(workspaceId);
      entry.stale = true;
      entry.charges += 1;
    },
  };
}
