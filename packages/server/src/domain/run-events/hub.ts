/**
 * @module The live tail of the runs this instance executes, and how readers anywhere follow it.
 *
 * - The execution pushes each event (log.ts's execution events, then the tail once the run
 *   closed) to its `LiveRun`; readers on this instance get them at once, in order.
 * - Readers on other instances (PostgreSQL: several instances share the store) ask for a run on
 *   the `service_run_watch` channel (`[runId, after]`); the instance executing it answers on
 *   `service_run_events` with every event after `after`, then with each new one, until the terminal
 *   event. Nothing is published for a run nobody watches, so the log costs an invocation no
 *   statement. Publishing is serialised per run (one NOTIFY in flight; what waited meanwhile goes
 *   in the next), so notifications arrive in order; a payload above PostgreSQL's 8000-byte limit
 *   goes in numbered pieces. A watch that arrives before the run begins here (an inbound run
 *   waiting for its hand-over) is remembered for WATCH_MEMORY_MS.
 * - A lost notification shows as a gap in the sequences: the reader asks again (`rewatch`) and
 *   drops what it already has. The store stays the authority: reader.ts reads the
 *   stored log once the run closed.
 * - Embedded store: one instance, no bus.
 */
import type { Db } from '../../store/db.ts';
import { notify } from '../../store/listen.ts';
import { type ExecutionEvent, type ExecutionEventBody, firstExecutionSequence, type RunEvent, tailEvents } from './log.ts';

const WATCH_CHANNEL = 'service_run_watch';
const EVENTS_CHANNEL = 'service_run_events';
/** How long a watch for a run not executing here is remembered (it may begin here soon). */
const WATCH_MEMORY_MS = 30_000;
const MAX_REMEMBERED_WATCHES = 10_000;
/** Characters of JSON per notification piece: at most 4 bytes each, within the 8000-byte payload. */
const PIECE_CHARS = 1_800;
const RUN_ID = /^run_[A-Za-z0-9]{1,64}$/;

export type RunEventListener = (event: RunEvent) => void;

/** The log of one run executing here. */
export interface LiveRun {
  /** Appends an execution event; answers its sequence. */
  push(body: ExecutionEventBody, at: Date): number;
  /** The execution events so far (what the closing statement stores). */
  executionEvents(): readonly ExecutionEvent[];
  /** The run closed as `run` says: its usage and terminal events end the log; answers the terminal's sequence. */
  end(run: Parameters<typeof tailEvents>[0]): number;
  /**
   * The run paused for an approval (domain/runs/pause.ts stored its log with `approval.requested`): that event ends
   * this execution's log; readers go on from the stored log (run-events/reader.ts) until the resumed execution's.
   */
  pause(event: RunEvent): void;
  /** Resolves true as soon as a reader (here, or on another instance) follows the run; false after `ms` without one, or once it ended. */
  whenFollowed(ms: number): Promise<boolean>;
}

export interface RunEventHub {
  /**
   * The run starts executing here. With `restart`: an inbound run handed over again after its instance stopped
   * (`attempt`: its `runs.recoveries`); its log says `run.restarted` first, numbered above what the executions
   * before it sent. With `resumed`: a run resumed after an approval; its events are numbered after `after`.
   */
  begin(runId: string, restart?: { attempt: number; at: Date }, resumed?: { after: number }): LiveRun;
  /**
   * Calls `listener` with the run's events after `after` as they happen (those this instance
   * already holds first); wherever the run executes. Answers the unsubscribe.
   */
  follow(runId: string, after: number, listener: RunEventListener): () => void;
  /** A reader saw a gap after `after`: the executing instance sends again from there. */
  rewatch(runId: string, after: number): void;
  /** Joins the other instances through the store's notifications (PostgreSQL); without it, this instance alone. */
  listenToBus(): Promise<void>;
}

interface Live {
  events: RunEvent[];
  listeners: Set<RunEventListener>;
  /** Published to the other instances (someone there watches). */
  watched: boolean;
  outbox: RunEvent[];
  sending: boolean;
  /** Waiting for a reader (whenFollowed). */
  followed: Set<(yes: boolean) => void>;
}

/** What the hub's parts share. */
interface HubState {
  db: Db;
  logError?: ((error: unknown) => void) | undefined;
  /** The runs executing here. */
  live: Map<string, Live>;
  /** Readers here of runs executing elsewhere. */
  remote: Map<string, Set<RunEventListener>>;
  /** Watches of runs not (yet) executing here, until when they are remembered. */
  watches: Map<string, number>;
  /** Pieces of notifications still incomplete. */
  pieces: Map<string, string[]>;
  /** Joined to the other instances' notifications. */
  bus: boolean;
}

/** What publishing to the other instances needs. */
type Bus = Pick<HubState, 'db' | 'logError' | 'bus'>;

export function createRunEventHub(db: Db, options: { logError?: ((error: unknown) => void) | undefined } = {}): RunEventHub {
  const hub: HubState = { db, logError: options.logError, live: new Map(), remote: new Map(), watches: new Map(), pieces: new Map(), bus: false };
  return {
    listenToBus: () => listenToBus(hub),
    begin: (runId, restart, resumed) => beginRun(hub, runId, restart, resumed),
    follow: (runId, after, listener) => followRun(hub, runId, after, listener),
    rewatch(runId, after) {
      if (!hub.live.has(runId)) watch(hub, runId, after);
    },
  };
}

/** The run starts executing here (RunEventHub.begin). */
function beginRun(hub: Pick<HubState, 'live' | 'watches'> & Bus, runId: string, restart?: { attempt: number; at: Date }, resumed?: { after: number }): LiveRun {
  const remembered = hub.watches.get(runId);
  hub.watches.delete(runId);
  const entry: Live = {
    events: [],
    listeners: new Set(),
    watched: remembered !== undefined && remembered > Date.now(),
    outbox: [],
    sending: false,
    followed: new Set(),
  };
  hub.live.set(runId, entry);
  // A resumed execution numbers its events after what the pause, the decision and the resume stored.
  let next = resumed ? resumed.after + 1 : firstExecutionSequence(restart?.attempt ?? 0);
  const emit = (event: RunEvent) => {
    entry.events.push(event);
    for (const listener of entry.listeners) listener(event);
    if (entry.watched) publish(hub, runId, entry, [event]);
  };
  const push = (body: ExecutionEventBody, at: Date) => {
    const event: ExecutionEvent = { ...body, sequence: next++, runId, at: at.toISOString() };
    emit(event);
    return event.sequence;
  };
  if (restart) push({ type: 'run.restarted', attempt: restart.attempt, reason: 'interrupted' }, restart.at);
  return {
    push,
    executionEvents: () => entry.events as ExecutionEvent[],
    end(run) {
      const tail = tailEvents(run, next - 1);
      for (const event of tail) emit(event);
      hub.live.delete(runId);
      for (const resolve of entry.followed) resolve(false);
      return tail.at(-1)!.sequence;
    },
    pause(event) {
      emit(event);
      hub.live.delete(runId);
      for (const resolve of entry.followed) resolve(false);
    },
    whenFollowed: (ms) => whenFollowed(entry, ms),
  };
}

/** LiveRun.whenFollowed. */
function whenFollowed(entry: Live, ms: number): Promise<boolean> {
  if (entry.watched || entry.listeners.size > 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const done = (yes: boolean) => {
      clearTimeout(timer);
      entry.followed.delete(done);
      resolve(yes);
    };
    entry.followed.add(done);
  });
}

/** RunEventHub.follow: here when the run executes here, else through the bus. */
function followRun(hub: Pick<HubState, 'live' | 'remote'> & Bus, runId: string, after: number, listener: RunEventListener): () => void {
  const entry = hub.live.get(runId);
  if (entry) {
    for (const event of entry.events) if (event.sequence > after) listener(event);
    entry.listeners.add(listener);
    followedNow(entry);
    return () => entry.listeners.delete(listener);
  }
  let listeners = hub.remote.get(runId);
  if (!listeners) hub.remote.set(runId, (listeners = new Set()));
  listeners.add(listener);
  watch(hub, runId, after);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) hub.remote.delete(runId);
  };
}

/** Sends `events` of a run executing here to the other instances, one NOTIFY in flight per run. */
function publish(bus: Bus, runId: string, entry: Live, events: readonly RunEvent[]): void {
  if (!bus.bus || events.length === 0) return;
  entry.outbox.push(...events);
  if (entry.sending) return;
  entry.sending = true;
  void (async () => {
    try {
      while (entry.outbox.length > 0) {
        const batch = entry.outbox.splice(0);
        for (const payload of payloadsOf(runId, batch)) await notify(bus.db, EVENTS_CHANNEL, payload);
      }
    } catch (err) {
      // Readers elsewhere see a gap or wait for the stored log.
      bus.logError?.(err);
      entry.outbox.length = 0;
    } finally {
      entry.sending = false;
    }
  })();
}

/** Asks the instance executing the run for its events after `after`. */
function watch(bus: Bus, runId: string, after: number): void {
  if (!bus.bus) return;
  notify(bus.db, WATCH_CHANNEL, JSON.stringify([runId, after])).catch((err: unknown) => bus.logError?.(err));
}

/** RunEventHub.listenToBus. */
async function listenToBus(hub: HubState): Promise<void> {
  const { db } = hub;
  if (hub.bus || !db.listen) return;
  await db.listen(WATCH_CHANNEL, { state: () => {}, message: (payload) => watched(hub, payload) });
  await db.listen(EVENTS_CHANNEL, { state: () => {}, message: (payload) => heard(hub, payload) });
  hub.bus = true;
}

/** A watch from another instance: publish what the run has after it, or remember it for a run not executing here (yet). */
function watched(hub: Pick<HubState, 'live' | 'watches'> & Bus, payload: string): void {
  const asked = parseWatch(payload);
  if (!asked) return;
  const entry = hub.live.get(asked.runId);
  if (!entry) {
    if (hub.watches.size >= MAX_REMEMBERED_WATCHES) hub.watches.delete(hub.watches.keys().next().value!);
    hub.watches.set(asked.runId, Date.now() + WATCH_MEMORY_MS);
    return;
  }
  entry.watched = true;
  followedNow(entry);
  publish(
    hub,
    asked.runId,
    entry,
    entry.events.filter((e) => e.sequence > asked.after),
  );
}

/** Events of a run executing elsewhere: to its readers here. */
function heard(hub: Pick<HubState, 'pieces' | 'remote'>, payload: string): void {
  const message = assemble(hub.pieces, payload);
  if (!message || !hub.remote.has(message.runId)) return;
  for (const event of message.events) for (const listener of hub.remote.get(message.runId) ?? []) listener(event);
}

function followedNow(entry: Live): void {
  for (const resolve of entry.followed) resolve(true);
}

function parseWatch(payload: string): { runId: string; after: number } | undefined {
  try {
    const [runId, after] = JSON.parse(payload) as unknown[];
    if (typeof runId === 'string' && RUN_ID.test(runId) && Number.isSafeInteger(after)) return { runId, after: after as number };
  } catch {
    // Not ours.
  }
  return undefined;
}

/** `[runId, events]` as JSON, in pieces `[key, index, count, text]` when it is too long for one notification. */
function payloadsOf(runId: string, events: readonly RunEvent[]): string[] {
  const json = JSON.stringify([runId, events]);
  if (json.length <= PIECE_CHARS) return [JSON.stringify(['', 0, 1, json])];
  const key = `${runId}:${events[0]!.sequence}:${Math.random().toString(36).slice(2)}`;
  const count = Math.ceil(json.length / PIECE_CHARS);
  return Array.from({ length: count }, (_, i) => JSON.stringify([key, i, count, json.slice(i * PIECE_CHARS, (i + 1) * PIECE_CHARS)]));
}

/** The message a piece completes (pieces of one message arrive in order: one publisher sends them one after the other). */
function assemble(pending: Map<string, string[]>, payload: string): { runId: string; events: RunEvent[] } | undefined {
  try {
    const [key, index, count, text] = JSON.parse(payload) as [string, number, number, string];
    let json = text;
    if (count > 1) {
      const parts = index === 0 ? [] : pending.get(key);
      if (!parts || parts.length !== index) {
        pending.delete(key);
        return undefined;
      }
      parts.push(text);
      if (parts.length < count) {
        // Pieces of messages whose end was lost are dropped, not kept without end.
        if (index === 0 && pending.size >= 100) pending.clear();
        pending.set(key, parts);
        return undefined;
      }
      pending.delete(key);
      json = parts.join('');
    }
    const [runId, events] = JSON.parse(json) as [string, RunEvent[]];
    if (!RUN_ID.test(runId) || !Array.isArray(events) || !events.every((e) => Number.isSafeInteger(e?.sequence) && typeof e.type === 'string'))
      return undefined;
    return { runId, events };
  } catch {
    return undefined;
  }
}
