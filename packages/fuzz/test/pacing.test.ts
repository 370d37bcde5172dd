/**
 * The pacing transport: request-rate 429s are waited out and the same case sent again; other 429s
 * are answers; `--rate-limit` spaces requests evenly. Time is injected, so nothing here sleeps.
 */
import { describe, expect, it } from 'vitest';
import type { PreparedRequest } from '../src/case.ts';
import { pacedTransport, parseRate } from '../src/pacing.ts';
import type { RecordedResponse, Transport } from '../src/transport.ts';

function answer(status: number, body: unknown, headers: Record<string, string> = {}): RecordedResponse {
  const text = JSON.stringify(body);
  return { status, statusText: '', headers, body: new TextEncoder().encode(text), text, elapsedMs: 1, truncated: false };
}

function scripted(answers: RecordedResponse[]): Transport & { sent: PreparedRequest[] } {
  const sent: PreparedRequest[] = [];
  return { baseUrl: 'http://x', sent, send: async (r) => (sent.push(r), answers.shift() ?? answer(200, { ok: true })) };
}

const request = { method: 'GET', path: '/usage/current', headers: {} } as unknown as PreparedRequest;

describe('pacedTransport', () => {
  it('waits Retry-After after a 429 rate_limit_exceeded and sends the same request again', async () => {
    const inner = scripted([answer(429, { error: 'rate_limit_exceeded', retryAfterSec: 7 }, { 'retry-after': '7' })]);
    const waits: number[] = [];
    const t = pacedTransport(inner, { sleep: async (ms) => void waits.push(ms) });
    const res = await t.send(request);
    expect(res.status).toBe(200);
    expect(waits).toEqual([7000]);
    expect(inner.sent).toEqual([request, request]);
    expect(t.retried()).toBe(1);
  });

  it('does not retry a quota or kill-switch 429, nor a Retry-After past the longest wait', async () => {
    for (const first of [
      answer(429, { error: 'quota_exceeded', policy: 'hardstop' }, { 'retry-after': '5' }),
      answer(429, { error: 'kill_switch', kind: 'hour' }, { 'retry-after': '5' }),
      answer(429, { error: 'rate_limit_exceeded' }, { 'retry-after': '3600' }),
    ]) {
      const inner = scripted([first]);
      const t = pacedTransport(inner, { sleep: async () => {}, maxWaitSec: 120 });
      expect((await t.send(request)).status).toBe(429);
      expect(inner.sent).toHaveLength(1);
    }
  });

  it('gives up after maxRetries and returns the 429', async () => {
    const limited = () => answer(429, { error: 'rate_limited' }, { 'retry-after': '1' });
    const inner = scripted([limited(), limited(), limited(), limited()]);
    const t = pacedTransport(inner, { sleep: async () => {}, maxRetries: 2 });
    expect((await t.send(request)).status).toBe(429);
    expect(inner.sent).toHaveLength(3);
  });

  it('spaces requests evenly at --rate-limit', async () => {
    let clock = 0;
    const waits: number[] = [];
    const t = pacedTransport(scripted([]), { ratePerSec: 4, now: () => clock, sleep: async (ms) => void (waits.push(ms), (clock += ms)) });
    for (let i = 0; i < 4; i += 1) await t.send(request);
    expect(waits).toEqual([250, 250, 250]);
  });

  it('reads --rate-limit as N/s or N/m', () => {
    expect(parseRate('10/s')).toBe(10);
    expect(parseRate('30/m')).toBe(0.5);
    expect(parseRate('2')).toBe(2);
    expect(() => parseRate('fast')).toThrow(/--rate-limit/);
    expect(() => parseRate('0/s')).toThrow(/--rate-limit/);
  });
});
