/**
 * @module Health of one instance: liveness (the process serves) and readiness (the store and, when
 * configured, Redis answer within a second; the sealed secrets open, as checked at start; not while shutting
 * down; not while admission control refuses newcomers at its hard bound). `GET /healthz` and `GET /readyz`
 * answer from it; `serve` marks the shutdown.
 */
import type { Db } from '../../store/db.ts';

export type DependencyStatus = 'ok' | 'failing' | 'not_configured';
export type Failing = 'store' | 'redis' | 'secrets' | 'shutdown' | 'admission';

/** Admission control as readiness sees it: `saturated` while it refuses newcomers at its hard bound. */
export type AdmissionStatus = 'ok' | 'saturated';

/** Admission control's word on this instance (middleware/admission): it refuses even parties below their share. */
export interface Saturation {
  saturated(): boolean;
}

export interface Readiness {
  /** `secrets` once the start-up check told (`recordSealedSecrets`); `admission` when admission control is configured. */
  checks: { store: DependencyStatus; redis: DependencyStatus; secrets?: DependencyStatus; admission?: AdmissionStatus };
  /** Empty when ready. */
  failing: Failing[];
}

export interface Pingable {
  ping(): Promise<unknown>;
}

export interface Health {
  readiness(): Promise<Readiness>;
  /**
   * What the start-up check of sealed secrets found (runtime/sealed-secrets.ts `unopenableSecret`): the column
   * whose value does not open under the instance's key, or undefined. From then on readiness says `secrets`.
   */
  recordSealedSecrets(unopenable: string | undefined): void;
  /** From now on readiness fails with `shutdown` (a graceful stop has begun). */
  beginShutdown(): void;
  readonly shuttingDown: boolean;
}

/** Budget of one dependency check. */
export const CHECK_TIMEOUT_MS = 1_000;

export function createHealth(deps: { db: Db; redis?: Pingable | undefined; saturation?: Saturation | undefined; timeoutMs?: number }): Health {
  let shuttingDown = false;
  let secrets: DependencyStatus | undefined;
  const timeoutMs = deps.timeoutMs ?? CHECK_TIMEOUT_MS;
  return {
    get shuttingDown() {
      return shuttingDown;
    },
    recordSealedSecrets(unopenable) {
      secrets = unopenable === undefined ? 'ok' : 'failing';
    },
    beginShutdown() {
      shuttingDown = true;
    },
    async readiness() {
      const redis = deps.redis;
      const [store, redisStatus] = await Promise.all([
        answers(() => deps.db.query('SELECT 1'), timeoutMs),
        redis ? answers(() => redis.ping(), timeoutMs) : Promise.resolve<DependencyStatus>('not_configured'),
      ]);
      const failing: Failing[] = [];
      if (store === 'failing') failing.push('store');
      if (redisStatus === 'failing') failing.push('redis');
      if (secrets === 'failing') failing.push('secrets');
      const admission = deps.saturation ? (deps.saturation.saturated() ? 'saturated' : 'ok') : undefined;
      if (admission === 'saturated') failing.push('admission');
      if (shuttingDown) failing.push('shutdown');
      return { checks: { store, redis: redisStatus, ...(secrets ? { secrets } : {}), ...(admission ? { admission } : {}) }, failing };
    },
  };
}

async function answers(probe: () => Promise<unknown>, timeoutMs: number): Promise<DependencyStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DependencyStatus>((resolve) => {
    timer = setTimeout(() => resolve('failing'), timeoutMs);
    timer.unref?.();
  });
  try {
    return await Promise.race([probe().then(() => 'ok' as const), timeout]);
  } catch {
    return 'failing';
  } finally {
    clearTimeout(timer);
  }
}
