/**
 * A workspace's connections to its integrations are bounded: past its share a call waits for one of its own
 * slots (or gives up when its signal aborts), while another workspace is served at once.
 */
import { describe, expect, it } from 'vitest';
import { createConnectionSlots } from './connection-slots.ts';

describe('connection slots', () => {
  it("holds a workspace to its share and leaves another workspace's slots free", async () => {
    const slots = createConnectionSlots(2);
    const never = new AbortController().signal;
    const a1 = await slots.acquire('wksp_a', never);
    await slots.acquire('wksp_a', never);
    expect(slots.inUse('wksp_a')).toBe(2);

    let third = false;
    const waiting = slots.acquire('wksp_a', never).then((release) => {
      third = true;
      return release;
    });
    // Another workspace is not held by A's slow connector.
    const b = await slots.acquire('wksp_b', never);
    expect(slots.inUse('wksp_b')).toBe(1);
    await Promise.resolve();
    expect(third).toBe(false);

    a1();
    a1(); // giving back twice frees one slot only
    const release = await waiting;
    expect(third).toBe(true);
    expect(slots.inUse('wksp_a')).toBe(2);
    release();
    b();
    expect(slots.inUse('wksp_b')).toBe(0);
  });

  it('rejects a waiting call when its signal aborts, and its place is not kept', async () => {
    const slots = createConnectionSlots(1);
    const held = await slots.acquire('wksp_a', new AbortController().signal);
    const gaveUp = new AbortController();
    const waiting = slots.acquire('wksp_a', gaveUp.signal);
    gaveUp.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    held();
    expect(slots.inUse('wksp_a')).toBe(0);
    const again = await slots.acquire('wksp_a', new AbortController().signal);
    expect(slots.inUse('wksp_a')).toBe(1);
    again();
  });
});
