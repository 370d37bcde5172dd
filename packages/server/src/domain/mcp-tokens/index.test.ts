import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../clock.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createKeyService } from '../keys/service.ts';
import { createWorkspace } from '../workspaces/index.ts';
import { createMcpTokenService } from './index.ts';

describe.each(testBackends())('MCP tokens on $name', ({ open }) => {
  let store: TestStore;
  const clock = fixedClock('2026-03-01T12:00:00Z');
  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  it('issues a one-hour token of the key workspace that verifies until it expires', async () => {
    const local = fixedClock('2026-03-01T12:00:00Z');
    const workspace = await createWorkspace(store.db, local, 'W');
    const keys = createKeyService({ db: store.db, clock: local });
    const key = await keys.create(workspace.id, { name: 'mcp', scopes: ['mcp:tenant', 'usage:read'] });
    const tokens = createMcpTokenService({ db: store.db, clock: local });
    const issued = await tokens.issue({ keyId: key.id, workspaceId: workspace.id });
    expect(issued).toEqual({
      token: expect.stringMatching(/^service_mcp_[0-9A-Za-z]{32}$/),
      tokenType: 'Bearer',
      scopes: ['mcp:tenant'],
      expiresAt: '2026-03-01T13:00:00.000Z',
    });
    expect(await tokens.verify(`Bearer ${issued.token}`)).toMatchObject({
      workspaceId: workspace.id,
      keyId: key.id,
      scopes: ['mcp:tenant'],
    });
    const stored = await store.db.query(`SELECT * FROM mcp_tokens`);
    expect(JSON.stringify(stored)).not.toContain(issued.token);
    local.advance(3_600_000);
    await expect(tokens.verify(`Bearer ${issued.token}`)).rejects.toMatchObject({ code: 'not_authenticated', status: 401 });
  });

  it('dies with the key that issued it and refuses anything else', async () => {
    const workspace = await createWorkspace(store.db, clock, 'W2');
    const keys = createKeyService({ db: store.db, clock });
    const key = await keys.create(workspace.id, { name: 'mcp', scopes: ['mcp:tenant'] });
    const tokens = createMcpTokenService({ db: store.db, clock });
    const issued = await tokens.issue({ keyId: key.id, workspaceId: workspace.id }, 600);
    await keys.revoke(workspace.id, key.id);
    await expect(tokens.verify(`Bearer ${issued.token}`)).rejects.toMatchObject({ code: 'not_authenticated' });
    await expect(tokens.verify(undefined)).rejects.toMatchObject({ code: 'missing_bearer', status: 401 });
    await expect(tokens.verify(`Bearer ${key.secret}`)).rejects.toMatchObject({ code: 'not_authenticated' });
    await expect(tokens.verify(`Bearer service_mcp_${'a'.repeat(32)}`)).rejects.toMatchObject({ code: 'not_authenticated' });
  });
});
