/**
 * Following a run's event log through drops: a run that waits for an approval sends nothing for as long as the
 * decision takes, so a stream the server keeps opening is followed however often it is cut, and only a server that
 * cannot be reached ends the live view.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from './run-events.ts';

const runId = 'run_7Hk2Lm9QvX4pT8sW3nB6';
const at = '2026-11-22T09:14:03Z';
const fetchMock = vi.fn<(request: Request) => Promise<Response>>();
let follow: typeof import('./run-events.ts').followRunEvents;

beforeAll(async () => {
  // The client is made on import, for the page's origin and with the fetch of that moment.
  vi.stubGlobal('window', { location: { origin: 'https://panel.test' } });
  vi.stubGlobal('fetch', fetchMock);
  follow = (await import('./run-events.ts')).followRunEvents;
});
afterAll(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
  // The client stays bound to the stubs: a later suite of the same worker imports it anew.
  vi.resetModules();
});

/** A 200 event stream of these events (after a keep-alive comment), ended by the server. */
function stream(events: RunEvent[]): Response {
  const text = `: keep-alive\n\n${events.map((e) => `id: ${e.sequence}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')}`;
  return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** Runs `follow` to its end under fake timers, its waits passed at once. */
async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  while (!outcome) await vi.advanceTimersByTimeAsync(15_000);
  return outcome;
}

describe('following a run that waits for an approval', () => {
  it('reopens a quiet stream the server keeps cutting, past ten cuts, to the decision and the end; gives up only on a server it cannot reach', async () => {
    vi.useFakeTimers();
    const requested: RunEvent = {
      sequence: 4,
      type: 'approval.requested',
      runId,
      at,
      action: 'email.send',
      summary: 'Send it.',
      approvalId: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb',
    };
    const rest: RunEvent[] = [
      { sequence: 5, type: 'approval.decided', runId, at, approvalId: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb', decision: 'approved' },
      { sequence: 6, type: 'run.resumed', runId, at, approvalId: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb' },
      { sequence: 7, type: 'run.completed', runId, at },
    ];
    const lastEventIds: (string | null)[] = [];
    let calls = 0;
    fetchMock.mockImplementation(async (request) => {
      lastEventIds.push(request.headers.get('Last-Event-ID'));
      calls += 1;
      // The request, then fifteen quiet streams cut before the decision, then the decision and the rest.
      return stream(calls === 1 ? [requested] : calls <= 16 ? [] : rest);
    });
    const seen: RunEvent['type'][] = [];
    const outcome = await settle(follow(runId, { signal: new AbortController().signal, onEvent: (e) => seen.push(e.type), onConnection: () => {} }));
    expect(outcome.error).toBeUndefined();
    expect(outcome.value).toMatchObject({ type: 'run.completed', sequence: 7 });
    expect(seen).toEqual(['approval.requested', 'approval.decided', 'run.resumed', 'run.completed']);
    expect(lastEventIds).toEqual([null, ...Array.from({ length: 16 }, () => '4')]);

    // Only a server that cannot be reached, ten times in a row, ends the live view.
    fetchMock.mockReset();
    fetchMock.mockRejectedValue(new TypeError('fetch failed'));
    const lost = await settle(follow(runId, { signal: new AbortController().signal, onEvent: () => {}, onConnection: () => {} }));
    expect(lost.error).toMatchObject({ code: 'network_error' });
    expect(fetchMock).toHaveBeenCalledTimes(11);
  });
});
