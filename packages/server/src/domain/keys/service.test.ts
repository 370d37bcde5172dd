import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { ServiceError } from '../../errors.ts';
import { countingDb, testBackends, type TestStore } from '@service/testing/store';
import { createWorkspace } from '../workspaces/index.ts';
import { createKeyService } from './service.ts';

describe.each(testBackends())('API keys on $name', ({ open }) => {
  let store: TestStore;
  const clock = fixedClock('2026-01-01T00:00:00Z');
  let workspaceId: string;
  let otherWorkspaceId: string;

  beforeAll(async () => {
    store = await open();
    workspaceId = (await createWorkspace(store.db, clock, 'Acme')).id;
    otherWorkspaceId = (await createWorkspace(store.db, clock, 'Other')).id;
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  const service = () => createKeyService({ db: store.db, clock });

  it('issues a key that verifies, with its workspace and scopes, and stores only a hash', async () => {
    const keys = service();
    const issued = await keys.create(workspaceId, { name: 'ci', scopes: ['usage:read', 'tenant:read'] });
    expect(issued).toMatchObject({
      name: 'ci',
      scopes: ['usage:read', 'tenant:read'],
      status: 'active',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2027-01-01T00:00:00.000Z',
      lastUsedAt: null,
      revokedAt: null,
      prefix: issued.secret.slice(0, 22),
    });
    expect(issued.id).toMatch(/^key_[0-9A-Za-z]{16,32}$/);
    const verified = await keys.verify(`Bearer ${issued.secret}`);
    expect(verified).toMatchObject({ keyId: issued.id, workspaceId, scopes: ['usage:read', 'tenant:read'] });

    const stored = await store.db.query<Record<string, unknown>>(`SELECT * FROM api_keys WHERE id = $1`, [issued.id]);
    expect(JSON.stringify(stored)).not.toContain(issued.secret.slice(16));
    const listed = await keys.list(workspaceId);
    const mine = listed.find((k) => k.id === issued.id)!;
    expect(Object.keys(mine).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'scopes', 'status'].sort());
    expect(mine.lastUsedAt).toBe('2026-01-01T00:00:00.000Z');
  });

  it('tells missing_bearer, api_key_not_found and api_key_invalid apart', async () => {
    const keys = service();
    const issued = await keys.create(workspaceId, { name: 'x', scopes: ['usage:read'] });
    await expect(keys.verify(undefined)).rejects.toMatchObject({ code: 'missing_bearer', status: 401 });
    await expect(keys.verify(`Basic ${issued.secret}`)).rejects.toMatchObject({ code: 'missing_bearer' });
    await expect(keys.verify('Bearer service_sk_live_ZZZZZZ000000000000000000')).rejects.toMatchObject({
      code: 'api_key_not_found',
      status: 401,
    });
    await expect(keys.verify('Bearer not-a-key')).rejects.toMatchObject({ code: 'api_key_not_found' });
    // Known visible prefix, wrong remainder.
    const forged = `${issued.secret.slice(0, 22)}${'0'.repeat(18)}`;
    await expect(keys.verify(`Bearer ${forged}`)).rejects.toMatchObject({ code: 'api_key_invalid', status: 401 });
  });

  it('revokes at once, on every instance, even with a warm cache', async () => {
    const a = service();
    const b = service();
    const issued = await a.create(workspaceId, { name: 'r', scopes: ['usage:read'] });
    await b.verify(`Bearer ${issued.secret}`); // b caches the verification
    const revoked = await a.revoke(workspaceId, issued.id);
    expect(revoked).toMatchObject({ id: issued.id, status: 'revoked', revokedAt: '2026-01-01T00:00:00.000Z' });
    expect(revoked).not.toHaveProperty('secret');
    await expect(b.verify(`Bearer ${issued.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    await expect(a.verify(`Bearer ${issued.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    // Soft delete: the key is still listed, as revoked.
    expect((await a.list(workspaceId)).find((k) => k.id === issued.id)?.status).toBe('revoked');
  });

  it('rotates into a new key with the same scopes and revokes the old one at once', async () => {
    const a = service();
    const b = service();
    const old = await a.create(workspaceId, { name: 'rot', scopes: ['mcp:tenant', 'usage:*'], expiresInDays: 30 });
    await b.verify(`Bearer ${old.secret}`);
    const fresh = await a.rotate(workspaceId, old.id);
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.secret).not.toBe(old.secret);
    expect(fresh).toMatchObject({ name: 'rot', scopes: ['mcp:tenant', 'usage:*'], status: 'active' });
    expect(fresh.expiresAt).toBe('2026-01-31T00:00:00.000Z');
    await expect(b.verify(`Bearer ${old.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    expect(await b.verify(`Bearer ${fresh.secret}`)).toMatchObject({ keyId: fresh.id });
    await expect(a.rotate(workspaceId, old.id)).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('refuses a revoked key on another listening instance right after the revoke returns, and its hits make no query', async () => {
    const a = createKeyService({ db: store.db, clock, listen: true });
    const counted = countingDb(await store.peer());
    const b = createKeyService({ db: counted.db, clock, listen: true });
    await Promise.all([a.ready(), b.ready()]);
    expect(b.listening()).toBe(true);
    for (let round = 0; round < 5; round += 1) {
      const issued = await a.create(workspaceId, { name: `l${round}`, scopes: ['usage:read'] });
      await b.verify(`Bearer ${issued.secret}`); // b caches it (and writes last_used_at once)
      counted.statements.length = 0;
      expect(await b.verify(`Bearer ${issued.secret}`)).toMatchObject({ keyId: issued.id });
      expect(counted.statements).toEqual([]); // no revocation read, no last_used_at write
      await a.revoke(workspaceId, issued.id);
      await expect(b.verify(`Bearer ${issued.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
      await expect(a.verify(`Bearer ${issued.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    }
  });

  it('drops a rotated key at once on another listening instance', async () => {
    const a = createKeyService({ db: store.db, clock, listen: true });
    const b = createKeyService({ db: await store.peer(), clock, listen: true });
    await Promise.all([a.ready(), b.ready()]);
    const old = await a.create(workspaceId, { name: 'rot-l', scopes: ['usage:read'] });
    await b.verify(`Bearer ${old.secret}`);
    const fresh = await a.rotate(workspaceId, old.id);
    await expect(b.verify(`Bearer ${old.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    expect(await b.verify(`Bearer ${fresh.secret}`)).toMatchObject({ keyId: fresh.id });
  });

  it('writes last_used_at at most once a minute per key', async () => {
    const local = fixedClock('2026-01-01T00:00:00Z');
    const keys = createKeyService({ db: store.db, clock: local, listen: true });
    const issued = await keys.create(workspaceId, { name: 'touch', scopes: ['usage:read'] });
    const lastUsed = async () => (await keys.list(workspaceId)).find((k) => k.id === issued.id)?.lastUsedAt;
    await keys.verify(`Bearer ${issued.secret}`);
    expect(await lastUsed()).toBe('2026-01-01T00:00:00.000Z');
    local.advance(59_999);
    await keys.verify(`Bearer ${issued.secret}`);
    expect(await lastUsed()).toBe('2026-01-01T00:00:00.000Z');
    local.advance(1);
    await keys.verify(`Bearer ${issued.secret}`);
    expect(await lastUsed()).toBe('2026-01-01T00:01:00.000Z');
    // A second key has its own minute.
    const other = await keys.create(workspaceId, { name: 'touch2', scopes: ['usage:read'] });
    await keys.verify(`Bearer ${other.secret}`);
    expect((await keys.list(workspaceId)).find((k) => k.id === other.id)?.lastUsedAt).toBe('2026-01-01T00:01:00.000Z');
  });

  it('stops accepting a key when it expires, cached or not', async () => {
    const local = fixedClock('2026-01-01T00:00:00Z');
    const keys = createKeyService({ db: store.db, clock: local });
    const issued = await keys.create(workspaceId, { name: 'short', scopes: ['usage:read'], expiresInDays: 1 });
    await keys.verify(`Bearer ${issued.secret}`);
    local.advance(86_400_000);
    await expect(keys.verify(`Bearer ${issued.secret}`)).rejects.toMatchObject({ code: 'api_key_not_found' });
    expect((await keys.list(workspaceId)).find((k) => k.id === issued.id)?.status).toBe('expired');
  });

  it('validates name and expiry (1 to 730 days, default 365)', async () => {
    const keys = service();
    for (const expiresInDays of [0, 731, 1.5]) {
      await expect(keys.create(workspaceId, { name: 'n', scopes: ['usage:read'], expiresInDays })).rejects.toMatchObject({
        code: 'invalid_body',
      });
    }
    await expect(keys.create(workspaceId, { name: '', scopes: ['usage:read'] })).rejects.toBeInstanceOf(ServiceError);
    await expect(keys.create(workspaceId, { name: 'n'.repeat(101), scopes: ['usage:read'] })).rejects.toMatchObject({
      code: 'invalid_body',
    });
    const max = await keys.create(workspaceId, { name: 'n', scopes: ['usage:read'], expiresInDays: 730 });
    expect(max.expiresAt).toBe('2028-01-01T00:00:00.000Z');
  });

  it("never shows, revokes or rotates another workspace's key", async () => {
    const keys = service();
    const theirs = await keys.create(otherWorkspaceId, { name: 'theirs', scopes: ['usage:read'] });
    expect((await keys.list(workspaceId)).map((k) => k.id)).not.toContain(theirs.id);
    await expect(keys.revoke(workspaceId, theirs.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.rotate(workspaceId, theirs.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await keys.verify(`Bearer ${theirs.secret}`)).toMatchObject({ workspaceId: otherWorkspaceId });
  });
});
