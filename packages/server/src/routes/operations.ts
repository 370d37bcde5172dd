/**
 * @module Health routes for load balancers (tag Operations): `GET /healthz` and `GET /readyz`. No
 * credential and outside the rate limits (`x-operations`, see app.ts).
 */
import { fail, retryHints } from '../errors.ts';
import type { Handler } from './handler.ts';

/** Seconds a load balancer waits before asking a not-ready instance again. */
const NOT_READY_RETRY_AFTER_SEC = 5;

const getLiveness: Handler<'getLiveness'> = () => ({ status: 200, body: { status: 'ok' } });

const getReadiness: Handler<'getReadiness'> = async (_c, _input, services) => {
  const { checks, failing } = await services.health.readiness();
  if (failing.length === 0) return { status: 200, body: { status: 'ready', checks } };
  const down = failing.filter((name) => name === 'store' || name === 'redis');
  const why = failing.includes('shutdown')
    ? 'the instance is shutting down'
    : down.length > 0
      ? `${down.join(', ')} does not answer`
      : failing.includes('secrets')
        ? "stored secrets do not open under this instance's key"
        : 'the instance is at capacity';
  throw fail('service_unavailable', `Not ready: ${why}.`, { failing, checks }, retryHints(NOT_READY_RETRY_AFTER_SEC * 1000, true));
};

export const operationsHandlers = { getLiveness, getReadiness };
