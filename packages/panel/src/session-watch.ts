/**
 * @module Ends the signed-in panel when its session ends, with the reason the sign-in screen says: at the session's
 * expiry (a timer), on any `401` answer (expired, signed out in another tab or browser or on another instance, ended
 * by a password or two-step reset), and when the tab comes back into view to a session that is gone. The session
 * read again on that return also brings what another tab changed meanwhile (the workspace, the role): tabs share
 * one session.
 */
import { useEffect, useRef } from 'preact/hooks';
import { onUnauthenticated } from './api.ts';
import { readSession, type Session } from './session.ts';

/** `expired`: its 12 hours are over; `ended`: it ended before that, elsewhere. */
export type EndReason = 'expired' | 'ended';

export interface SessionWatchHandlers {
  ended(reason: EndReason): void;
  refreshed(session: Session): void;
}

/** The longest delay `setTimeout` keeps (2^31 - 1 ms, 24.8 days); a session lasts 12 hours. */
const LONGEST_DELAY_MS = 2_147_483_647;

export function useSessionWatch(session: Session | undefined, handlers: SessionWatchHandlers): void {
  const on = useRef(handlers);
  on.current = handlers;
  useEffect(() => {
    if (!session) return;
    // A read still under way when the watch stops (signed out, switched) must not bring this session back.
    let watching = true;
    const reason = (): EndReason => (Date.now() >= session.endsAt ? 'expired' : 'ended');
    const stopWatching = onUnauthenticated(() => on.current.ended(reason()));
    const timer = setTimeout(() => on.current.ended('expired'), Math.min(Math.max(session.endsAt - Date.now(), 0), LONGEST_DELAY_MS));
    function onVisible() {
      if (document.visibilityState !== 'visible') return;
      readSession().then(
        (next) => watching && (next ? on.current.refreshed(next) : on.current.ended(reason())),
        // Unreachable for now: the screens say so on their next call; the session may well be alive.
        () => undefined,
      );
    }
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      watching = false;
      stopWatching();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [session]);
}
