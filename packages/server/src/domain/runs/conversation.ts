/**
 * @module Conversation threads: the turns of a `conversationId` within a workspace. A new
 * invocation is given the earlier turns before its own messages; a completed run appends its
 * messages and its (redacted) answer (in its closing statement, `finish_run`: see close.ts).
 */
import { zMessage } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import { recentTurns } from './queries/conversation.ts';
import type { EngineMessage } from '../../engine/index.ts';

/** Bounded history: the most recent turns only, so a long thread cannot grow a request without end. */
const MAX_EARLIER_TURNS = 50;

/** A thread's most recent turns, and how many it has in all (the next turn's `seq`). */
export interface Thread {
  turns: EngineMessage[];
  length: number;
}

export async function earlierTurns(db: Db, workspaceId: string, conversationId: string): Promise<Thread> {
  const rows = await recentTurns(db, workspaceId, conversationId, MAX_EARLIER_TURNS);
  return {
    turns: rows.map((r) => ({ role: zMessage.shape.role.parse(r.role), content: r.content })),
    length: rows.length === 0 ? 0 : rows[rows.length - 1]!.seq + 1,
  };
}

/** Notified by `finish_run` when it appends turns: `[instance, workspaceId, conversationId]` as JSON. */
export const CONVERSATIONS_CHANNEL = 'service_conversations';

/** Threads kept in memory; beyond, the oldest is dropped. */
const MAX_CACHED_THREADS = 10_000;

/**
 * The conversations an instance serves, in memory: the earlier turns of a thread, read once, then
 * kept current by the runs this instance closes (it appends what it wrote) and by notifications of
 * the others' (it drops the thread; the next invocation reads it again).
 */
export interface ConversationCache {
  /** The thread as this instance knows it; `start_runs` checks its length against the store's. */
  earlierTurns(workspaceId: string, conversationId: string): Promise<Thread>;
  /** The store said the thread has more turns than the copy held (another instance's notification is late). */
  forget(workspaceId: string, conversationId: string): void;
  /** This instance's id, sent with the notification of its appends (it ignores its own). */
  readonly instance: string;
  /** A run of the thread is closing here: until `closed`, no read of it is kept. */
  closing(workspaceId: string, conversationId: string): void;
  /** It closed, having appended `appended` (null: nothing known, the thread is read again). */
  closed(workspaceId: string, conversationId: string, appended: readonly EngineMessage[] | null): void;
}

/**
 * Entries are used only while the listener is up (as the agent settings cache, domain/agents/
 * settings-cache.ts): while it is down every read goes to the store, and the cache starts empty when
 * it is back. A notification arrives a little after the commit that sent it, so a copy may be behind
 * for that long: `start_runs` compares the thread's length with the store's and refuses a stale copy
 * (`stale_history`), and the invocation reads the thread again (start.ts), so the engine is never
 * given a thread without its latest turns. When two runs of one thread close at once here, the thread is dropped rather than
 * appended to, since their order in the store is only known there.
 */
export function createConversationCache(db: Db, instance: string): ConversationCache {
  const entries = new Map<string, Thread>();
  const inFlight = new Map<string, number>();
  let listening = false;
  /** Bumped by every change: a read that began before one is not kept. */
  let generation = 0;
  let subscribed: Promise<void> | undefined;
  const keyOf = (workspaceId: string, conversationId: string) => `${workspaceId}\n${conversationId}`;
  const drop = (key?: string) => {
    generation += 1;
    if (key === undefined) entries.clear();
    else entries.delete(key);
  };
  const subscribe = () =>
    db
      .listen?.(CONVERSATIONS_CHANNEL, {
        message: (payload) => {
          const [from, workspaceId, conversationId] = JSON.parse(payload) as [string, string, string];
          if (from !== instance) drop(keyOf(workspaceId, conversationId));
        },
        state: (up) => {
          listening = up;
          drop();
        },
      })
      .catch(() => {});
  return {
    instance,
    async earlierTurns(workspaceId, conversationId) {
      // The first read waits for the listener (once), so what it reads can be kept.
      await (subscribed ??= subscribe() ?? Promise.resolve());
      const key = keyOf(workspaceId, conversationId);
      const cached = listening ? entries.get(key) : undefined;
      if (cached) return cached;
      const started = generation;
      const turns = await earlierTurns(db, workspaceId, conversationId);
      if (listening && started === generation && !inFlight.has(key)) {
        if (entries.size >= MAX_CACHED_THREADS) entries.delete(entries.keys().next().value!);
        entries.set(key, turns);
      }
      return turns;
    },
    forget(workspaceId, conversationId) {
      drop(keyOf(workspaceId, conversationId));
    },
    closing(workspaceId, conversationId) {
      const key = keyOf(workspaceId, conversationId);
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
      generation += 1;
    },
    closed(workspaceId, conversationId, appended) {
      const key = keyOf(workspaceId, conversationId);
      const alone = inFlight.get(key) === 1;
      if (alone) inFlight.delete(key);
      else inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      generation += 1;
      const cached = entries.get(key);
      if (!cached || (appended && appended.length === 0)) return;
      if (alone && appended) entries.set(key, { turns: [...cached.turns, ...appended].slice(-MAX_EARLIER_TURNS), length: cached.length + appended.length });
      else entries.delete(key);
    },
  };
}
