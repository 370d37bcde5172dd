/**
 * @module Tests of the admission control through a small Hono app: past the in-flight bound, or past a party's
 * share, a request answers `503 service_unavailable` at once, with the retry hints of a request nothing was done
 * for; and the shares themselves (./shares.ts): one workspace holding its share does not stop another, the
 * unauthenticated addresses share one group, and the store's queue is shared the same way. A caller over its
 * share is answered after its Retry-After, not at once, and a credential seen before is charged to its workspace
 * from the first stage on.
 */
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdmissionShares, AT_CAPACITY_MESSAGE, admission, admitAnonymous, admitCaller, SHARE_REFUSAL_DELAY_MS, type AdmissionRefusal } from './index.ts';
import type { Ticket } from './shares.ts';

function buildApp(limits: { maxInFlight: number; maxStoreQueue: number }) {
  const refused: AdmissionRefusal[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const app = new Hono();
  const shares = new AdmissionShares(limits, () => 0);
  app.use(admission(shares, { exempt: (path) => path === '/healthz', refused: (reason) => refused.push(reason) }));
  app.get('/hold', async (c) => {
    await held;
    return c.json({ ok: true });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  return { app, refused, release, shares };
}

describe('admission', () => {
  it('past the in-flight bound: 503 with Retry-After 1, Retry-After-Ms 1000, X-Should-Retry true; saturated for readiness', async () => {
    const { app, refused, release, shares } = buildApp({ maxInFlight: 1, maxStoreQueue: 0 });
    const first = app.request('/hold');
    const res = await app.request('/hold', { headers: { 'X-Request-Id': 'req-full' } });
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['1', '1000', 'true']);
    expect(res.headers.get('x-request-id')).toBe('req-full');
    expect(await res.json()).toEqual({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE, requestId: 'req-full' });
    expect(refused).toEqual(['in_flight']);
    expect(shares.snapshot().saturated).toBe(true);
    // Health routes are never refused.
    expect((await app.request('/healthz')).status).toBe(200);
    release();
    expect((await first).status).toBe(200);
  });
});

describe('fair shares', () => {
  const ws = (id: string) => ({ kind: 'workspace', id }) as const;
  const addr = (id: string) => ({ kind: 'address', id }) as const;
  /** Admits one request of `party`; the ticket, or the refusal. */
  function take(shares: AdmissionShares, party: ReturnType<typeof ws> | ReturnType<typeof addr>): Ticket | AdmissionRefusal {
    const ticket = shares.enter();
    if (typeof ticket === 'string') return ticket;
    const refusal = shares.claim(ticket, party);
    if (refusal) {
      shares.leave(ticket);
      return refusal;
    }
    return ticket;
  }

  it('a workspace alone holds half of the bound; another is still admitted, and then the first holds a third', () => {
    const shares = new AdmissionShares({ maxInFlight: 12, maxStoreQueue: 0 }, () => 0);
    const a: Array<Ticket | AdmissionRefusal> = [];
    for (let i = 0; i < 8; i += 1) a.push(take(shares, ws('a')));
    expect(a.filter((t) => typeof t === 'string')).toEqual(['workspace_share', 'workspace_share']);
    expect(shares.snapshot()).toMatchObject({ workspaces: 6, activeWorkspaces: 1, workspacesAtShare: 1, saturated: false });
    // B finds room and is admitted up to its share (12 / 3 = 4); A is refused until it is under 4.
    const b = [take(shares, ws('b')), take(shares, ws('b')), take(shares, ws('b')), take(shares, ws('b')), take(shares, ws('b'))];
    expect(b.map((t) => (typeof t === 'string' ? t : 'admitted'))).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'workspace_share']);
    expect(take(shares, ws('a'))).toBe('workspace_share');
    for (const ticket of a.slice(0, 2)) if (typeof ticket !== 'string') shares.leave(ticket);
    expect(take(shares, ws('a'))).toBe('workspace_share');
    if (typeof a[2] !== 'string') shares.leave(a[2]!);
    expect(typeof take(shares, ws('a'))).toBe('object');
  });

  it('unauthenticated addresses share one group; one address holds a part of it and leaves room for the next', () => {
    const shares = new AdmissionShares({ maxInFlight: 24, maxStoreQueue: 0 }, () => 0);
    const results = Array.from({ length: 10 }, () => take(shares, addr('203.0.113.9')));
    // The group's share alone is 24 / 2 = 12; one address of it, 12 / 2 = 6.
    expect(results.filter((t) => typeof t !== 'string')).toHaveLength(6);
    expect(results.filter((t) => t === 'address_share')).toHaveLength(4);
    expect(typeof take(shares, addr('198.51.100.7'))).toBe('object');
    // A workspace is its own group: admitted whatever the addresses hold.
    expect(typeof take(shares, ws('b'))).toBe('object');
    expect(shares.snapshot()).toMatchObject({ unauthenticated: 7, workspaces: 1, addressesAtShare: 1 });
  });

  it('while the store queue is at its bound, the workspace holding its part of it is refused and another is admitted', () => {
    let queued = 0;
    const shares = new AdmissionShares({ maxInFlight: 0, maxStoreQueue: 8 }, () => queued);
    const a = Array.from({ length: 10 }, () => take(shares, ws('a')));
    expect(a.every((t) => typeof t !== 'string')).toBe(true);
    queued = 8;
    // Alone, A's part is 8 / 2 = 4; it holds 10. B holds none: its part with A active is 8 / 3 = 2.
    expect(take(shares, ws('a'))).toBe('store_queue');
    expect(typeof take(shares, ws('b'))).toBe('object');
    expect(typeof take(shares, ws('b'))).toBe('object');
    expect(take(shares, ws('b'))).toBe('store_queue');
  });
});

describe('refusals at a share', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Stage one, a stand-in for authentication (the workspace from a header), stage two. */
  function sharedApp(maxInFlight: number) {
    const shares = new AdmissionShares({ maxInFlight, maxStoreQueue: 0 }, () => 0);
    const refused: AdmissionRefusal[] = [];
    const holds: Array<() => void> = [];
    let authenticated = 0;
    let returned = 0;
    const app = new Hono<{ Variables: { auth?: { scheme: 'apiKey'; workspaceId: string } } }>();
    app.use(admission(shares, { exempt: () => false, refused: (reason) => refused.push(reason) }));
    app.use(async (c, next) => {
      authenticated += 1;
      // `Bearer a` and `Bearer a:2` are two credentials of workspace a.
      c.set('auth', { scheme: 'apiKey', workspaceId: c.req.header('authorization')!.slice('Bearer '.length).split(':')[0]! });
      await next();
      returned += 1;
    });
    app.use(admitCaller(shares, (reason) => refused.push(reason)) as never);
    app.get('/hold', async (c) => {
      await new Promise<void>((resolve) => holds.push(resolve));
      return c.json({ ok: true });
    });
    const call = (workspace: string) => app.request('/hold', { headers: { authorization: `Bearer ${workspace}` } });
    return { shares, refused, holds, call, authenticated: () => authenticated, returned: () => returned };
  }

  it('a caller over its share waits its Retry-After for the 503, its place already given back', async () => {
    vi.useFakeTimers();
    const { shares, refused, holds, call } = sharedApp(4);
    // Alone, A's share is 4 / 2 = 2.
    const held = [call('a'), call('a')];
    await vi.advanceTimersByTimeAsync(0);
    let answered: Response | undefined;
    const over = Promise.resolve(call('a')).then((res: Response) => (answered = res));
    await vi.advanceTimersByTimeAsync(SHARE_REFUSAL_DELAY_MS - 1);
    expect(answered).toBeUndefined();
    // While it waits it holds no place: A still holds exactly its 2.
    expect(shares.snapshot()).toMatchObject({ workspaces: 2, authenticating: 0 });
    await vi.advanceTimersByTimeAsync(1);
    await over;
    expect(answered!.status).toBe(503);
    expect(await answered!.json()).toMatchObject({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE });
    expect(refused).toEqual(['workspace_share']);
    for (const release of holds) release();
    expect((await Promise.all(held)).map((res) => res.status)).toEqual([200, 200]);
  });

  it('a refusal at stage two waits in stage one alone: the middleware between them have returned', async () => {
    vi.useFakeTimers();
    const { refused, holds, call, authenticated, returned } = sharedApp(4);
    const held = [call('a'), call('a')];
    await vi.advanceTimersByTimeAsync(0);
    let answered: Response | undefined;
    // Another credential of A, never seen: authenticated, then refused by stage two.
    const over = Promise.resolve(call('a:2')).then((res: Response) => (answered = res));
    await vi.advanceTimersByTimeAsync(SHARE_REFUSAL_DELAY_MS - 1);
    expect(authenticated()).toBe(3);
    expect(answered).toBeUndefined();
    // The stand-in for authentication has returned: the waiting refusal holds no frame of the chain but stage one's.
    expect(returned()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await over;
    expect(answered!.status).toBe(503);
    expect(answered!.headers.get('retry-after')).toBe('1');
    expect(await answered!.json()).toMatchObject({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE });
    expect(refused).toEqual(['workspace_share']);
    for (const release of holds) release();
    expect((await Promise.all(held)).map((res) => res.status)).toEqual([200, 200]);
  });

  it('a credential verified before is charged to its workspace at stage one: its flood never crowds those still authenticating', () => {
    let queued = 0;
    const shares = new AdmissionShares({ maxInFlight: 0, maxStoreQueue: 10 }, () => queued);
    shares.remember('digest-of-a', 'ws:a');
    // A's requests arrive with their known credential: charged to A at once, none of them authenticating.
    const a = Array.from({ length: 30 }, () => shares.enter(shares.hint('digest-of-a')));
    expect(a.every((t) => typeof t !== 'string' && t.party?.id === 'ws:a')).toBe(true);
    expect(shares.snapshot()).toMatchObject({ authenticating: 0, workspaces: 30 });
    queued = 10;
    // With the store's queue full, A is refused at stage one (its part is 10 / 2 = 5) …
    expect(shares.enter(shares.hint('digest-of-a'))).toBe('store_queue');
    // … and a request whose credential is not known yet still gets in to be authenticated (10 / 3 = 3 of them).
    const b = shares.enter(shares.hint('digest-of-b'));
    expect(typeof b).toBe('object');
    expect(shares.claim(b as Ticket, { kind: 'workspace', id: 'ws:b' })).toBeUndefined();
    // A wrong guess is corrected at stage two: the ticket moves to the credential's real workspace.
    queued = 0;
    shares.remember('digest-of-c', 'ws:a');
    const c = shares.enter(shares.hint('digest-of-c'));
    expect((c as Ticket).party).toEqual({ kind: 'workspace', id: 'ws:a' });
    const moved = typeof c === 'string' ? c : shares.claim(c, { kind: 'workspace', id: 'ws:c' });
    expect(moved).toBeUndefined();
    expect((c as Ticket).party).toEqual({ kind: 'workspace', id: 'ws:c' });
    expect(shares.snapshot()).toMatchObject({ workspaces: 32, activeWorkspaces: 3 });
  });

  it('on a route without a credential, an address at its share is refused at stage one, before the middleware in between', async () => {
    vi.useFakeTimers();
    const shares = new AdmissionShares({ maxInFlight: 8, maxStoreQueue: 0 }, () => 0);
    const refused: AdmissionRefusal[] = [];
    const holds: Array<() => void> = [];
    let between = 0;
    const app = new Hono();
    const trustProxy = 1;
    app.use(
      admission(shares, {
        exempt: () => false,
        refused: (reason) => refused.push(reason),
        anonymous: { route: (c) => c.req.method === 'POST' && c.req.path.startsWith('/inbound/'), trustProxy },
      }),
    );
    app.use(async (_c, next) => {
      between += 1;
      await next();
    });
    app.use(admitAnonymous(shares, { trustProxy, refused: (reason) => refused.push(reason) }) as never);
    app.post('/inbound/:slug', async (c) => {
      await new Promise<void>((resolve) => holds.push(resolve));
      return c.json({ ok: true });
    });
    const send = (address: string) => app.request('/inbound/events', { method: 'POST', headers: { 'x-forwarded-for': address } });
    // Alone, the unauthenticated group's share is 8 / 2 = 4, and one address holds 4 / 2 = 2 of it.
    const held = [send('10.0.0.1'), send('10.0.0.1')];
    await vi.advanceTimersByTimeAsync(0);
    expect(between).toBe(2);
    const over = send('10.0.0.1');
    // Another address is still admitted beside it.
    const other = send('10.0.0.2');
    await vi.advanceTimersByTimeAsync(0);
    expect(between).toBe(3);
    await vi.advanceTimersByTimeAsync(SHARE_REFUSAL_DELAY_MS);
    const answer = await over;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(await answer.json()).toMatchObject({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE });
    // Judged at stage one as stage two would have: the middleware between them never saw it, and it holds no place.
    expect(between).toBe(3);
    expect(refused).toEqual(['address_share']);
    expect(shares.snapshot()).toMatchObject({ unauthenticated: 3, authenticating: 0 });
    for (const release of holds) release();
    expect((await Promise.all([...held, other])).map((res) => res.status)).toEqual([200, 200, 200]);
  });

  it('a credential once verified is refused at stage one when its workspace is at its share, before authentication', async () => {
    vi.useFakeTimers();
    const { refused, holds, call, authenticated } = sharedApp(4);
    const held = [call('a'), call('a')];
    await vi.advanceTimersByTimeAsync(0);
    expect(authenticated()).toBe(2);
    const over = call('a');
    await vi.advanceTimersByTimeAsync(SHARE_REFUSAL_DELAY_MS);
    expect((await over).status).toBe(503);
    // Stage two remembered the header's workspace: the third request was judged at stage one, never authenticated.
    expect(authenticated()).toBe(2);
    expect(refused).toEqual(['workspace_share']);
    for (const release of holds) release();
    expect((await Promise.all(held)).map((res) => res.status)).toEqual([200, 200]);
  });
});
