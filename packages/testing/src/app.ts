/**
 * @module Test helper: an app on a fresh in-memory store (a schema of the process's one PGlite) with a fake clock, an initialised workspace
 * (admin with TOTP, a key with every scope) and shortcuts to sign in and to issue keys.
 */
import { fixedClock } from '../../server/src/clock.ts';
import { createApp, type AppOptions, type Deps } from '../../server/src/app.ts';
import { totpCode } from '../../server/src/domain/sessions/totp.ts';
import { initWorkspace, type InitResult } from '../../server/src/domain/workspaces/init.ts';
import type { OpenDb } from '../../server/src/store/db.ts';
import { randomBase62 } from '../../server/src/random.ts';
import { openMemoryStore } from './store.ts';

export interface TestApp extends InitResult {
  app: ReturnType<typeof createApp>['app'];
  services: ReturnType<typeof createApp>['services'];
  clock: ReturnType<typeof fixedClock>;
  db: OpenDb;
  /** Signs the admin in; returns the cookie header value and the csrfToken. */
  login(): Promise<{ cookie: string; csrfToken: string }>;
  /** A key of the workspace with exactly these scopes. */
  keyWith(...scopes: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function createTestApp(options: { db?: OpenDb; deps?: Partial<Deps>; app?: AppOptions } = {}): Promise<TestApp> {
  const db = options.db ?? (await openMemoryStore());
  const clock = fixedClock('2026-06-01T09:00:00Z');
  const { app, services } = createApp({ db, clock, logError: () => {}, ...options.deps }, options.app);
  // A distinct admin per app, so several test apps can share one store; sealed with the app's box.
  const init = await initWorkspace(db, clock, {
    adminEmail: `admin-${randomBase62(8).toLowerCase()}@example.com`,
    secretBox: services.webhooks.secretBox,
  });
  return {
    ...init,
    app,
    services,
    clock,
    db,
    async login() {
      // A fresh TOTP step for every login: each code is accepted once.
      clock.advance(30_000);
      const res = await app.request('/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: init.admin.email,
          password: init.admin.password,
          totpCode: totpCode(init.admin.totpSecret, clock.now()),
        }),
      });
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
      const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
      const { csrfToken } = (await res.json()) as { csrfToken: string };
      return { cookie, csrfToken };
    },
    async keyWith(...scopes) {
      return (await services.keys.create(init.workspaceId, { name: 'test', scopes })).secret;
    },
    async close() {
      await services.mcpConnector.close();
      if (!options.db) await db.close();
    },
  };
}
