/**
 * The Streamable HTTP sessions on their own, on a clock that only moves when told: ids, a workspace's sessions
 * invisible to another, the per-workspace cap closing that workspace's least recently used (never another's), the
 * instance's cap closing the least recently used of all, and the idle limit at its boundary.
 */
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { createMcpHttpSessions } from './http-sessions.ts';

describe('Streamable HTTP sessions', () => {
  it('ids are mcs_ + 32 base62; another workspace can neither use nor end a session', () => {
    const sessions = createMcpHttpSessions(fixedClock());
    const session = sessions.open('wksp_A');
    expect(session.id).toMatch(/^mcs_[A-Za-z0-9]{32}$/);
    expect(sessions.use(session.id, 'wksp_B')).toBeUndefined();
    expect(sessions.end(session.id, 'wksp_B')).toBe(false);
    expect(sessions.use(session.id, 'wksp_A')).toBe(session);
    expect(sessions.end(session.id, 'wksp_A')).toBe(true);
    expect(sessions.use(session.id, 'wksp_A')).toBeUndefined();
    expect(sessions.end(session.id, 'wksp_A')).toBe(false);
  });

  it("past its cap a workspace's least recently used session closes, and no other workspace's", () => {
    const sessions = createMcpHttpSessions(fixedClock(), { perWorkspace: 3 });
    const other = sessions.open('wksp_B');
    const [first, second, third] = [sessions.open('wksp_A'), sessions.open('wksp_A'), sessions.open('wksp_A')];
    sessions.use(first.id, 'wksp_A');
    const fourth = sessions.open('wksp_A');
    expect(sessions.count('wksp_A')).toBe(3);
    expect(sessions.use(second.id, 'wksp_A')).toBeUndefined();
    for (const kept of [first, third, fourth]) expect(sessions.use(kept.id, 'wksp_A')).toBe(kept);
    expect(sessions.use(other.id, 'wksp_B')).toBe(other);
    expect(sessions.count()).toBe(4);
  });

  it('past the instance cap, a workspace whose only session is the one closed keeps the new one', () => {
    const sessions = createMcpHttpSessions(fixedClock(), { total: 2 });
    sessions.open('wksp_A');
    sessions.open('wksp_B');
    // A's only session is the least recently used of all: opening A's next one closes it.
    const next = sessions.open('wksp_A');
    expect(sessions.count('wksp_A')).toBe(1);
    expect(sessions.use(next.id, 'wksp_A')).toBe(next);
    expect(sessions.end(next.id, 'wksp_A')).toBe(true);
  });

  it('past the instance cap the least recently used of all closes', () => {
    const sessions = createMcpHttpSessions(fixedClock(), { total: 2 });
    const a = sessions.open('wksp_A');
    const b = sessions.open('wksp_B');
    sessions.use(a.id, 'wksp_A');
    const c = sessions.open('wksp_C');
    expect(sessions.count()).toBe(2);
    expect(sessions.use(b.id, 'wksp_B')).toBeUndefined();
    expect(sessions.use(a.id, 'wksp_A')).toBe(a);
    expect(sessions.use(c.id, 'wksp_C')).toBe(c);
  });

  it('a session unused for the idle limit closes; a use starts the limit again', () => {
    const clock = fixedClock();
    const sessions = createMcpHttpSessions(clock, { idleMs: 1_000 });
    const kept = sessions.open('wksp_A');
    const idle = sessions.open('wksp_A');
    clock.advance(999);
    expect(sessions.use(kept.id, 'wksp_A')).toBe(kept);
    clock.advance(1);
    expect(sessions.use(idle.id, 'wksp_A')).toBeUndefined();
    expect(sessions.count('wksp_A')).toBe(1);
    clock.advance(998);
    expect(sessions.use(kept.id, 'wksp_A')).toBe(kept);
    clock.advance(1_000);
    expect(sessions.count()).toBe(0);
  });
});
