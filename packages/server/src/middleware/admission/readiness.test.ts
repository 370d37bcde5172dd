/**
 * @module Saturation is visible: when admission control refuses a request at its hard bound of requests in flight,
 * `GET /readyz` answers `503` with `failing: [admission]` (and `checks.admission: saturated`), and `/metrics` shows
 * the refusal by reason, the places held by party and `service_admission_saturated 1`. A refusal at a caller's own
 * share does not make the instance saturated. Through the app, with a request held by a body that never ends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { openMemoryStore } from '@service/testing/store';
import { createMetrics } from '../../metrics/index.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** An invocation whose body never ends: it holds its place until the test ends it. */
function heldInvocation(app: TestApp): { done: Promise<Response>; end(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
  controller.enqueue(new TextEncoder().encode('{"alias":'));
  const done = Promise.resolve(
    app.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${app.apiKey}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit),
  );
  return { done, end: () => controller.close() };
}

describe('saturation', () => {
  it('/readyz fails with admission while the hard bound refuses requests; /metrics shows it', async () => {
    const db = await openMemoryStore();
    const metrics = createMetrics({ db });
    t = await createTestApp({ db, deps: { metrics, admission: { maxInFlight: 1, maxStoreQueue: 0 } } });
    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'not_configured', admission: 'ok' } });

    const held = heldInvocation(t);
    for (;;) {
      const text = await metrics.render();
      if (text.includes('service_admission_in_flight{party="workspace"} 1')) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const refused = await t.app.request('/usage/current', { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(refused.status).toBe(503);

    const notReady = await t.app.request('/readyz');
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({
      error: 'service_unavailable',
      message: 'Not ready: the instance is at capacity.',
      failing: ['admission'],
      checks: { store: 'ok', redis: 'not_configured', admission: 'saturated' },
    });
    const text = await metrics.render();
    expect(text).toContain('service_admission_refusals_total{reason="in_flight"} 1');
    expect(text).toContain('service_admission_saturated 1');
    expect(text).toContain('service_admission_active_workspaces 1');
    held.end();
    expect((await held.done).status).toBe(400);
  });

  it('a refusal at a workspace share leaves the instance ready', async () => {
    const db = await openMemoryStore();
    const metrics = createMetrics({ db });
    t = await createTestApp({ db, deps: { metrics, admission: { maxInFlight: 2, maxStoreQueue: 0 } } });
    // Alone, the workspace's share is 2 / 2 = 1: its second request is refused at its share, not at the bound.
    const held = heldInvocation(t);
    for (;;) {
      if ((await metrics.render()).includes('service_admission_in_flight{party="workspace"} 1')) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await t.app.request('/usage/current', { headers: { authorization: `Bearer ${t.apiKey}` } })).status).toBe(503);
    const text = await metrics.render();
    expect(text).toContain('service_admission_refusals_total{reason="workspace_share"} 1');
    expect(text).toContain('service_admission_workspaces_at_share 1');
    expect(text).toContain('service_admission_saturated 0');
    expect((await t.app.request('/readyz')).status).toBe(200);
    held.end();
    await held.done;
  });
});
