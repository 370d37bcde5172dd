/**
 * @module The signature of an operation handler: translate HTTP to a domain call and back.
 */
import type { Context } from 'hono';
import type { AppEnv, Auth } from '../app-env.ts';
import { fail } from '../errors.ts';
import type { Services } from '../services.ts';

export type OperationHandler = (c: Context<AppEnv>, services: Services) => Response | Promise<Response>;

/** The caller as authenticated by the route's scheme; a route without security has none. */
export function authOf<S extends Auth['scheme']>(c: Context<AppEnv>, scheme: S): Extract<Auth, { scheme: S }> {
  const auth = c.get('auth');
  // Unreachable when the route's security is mounted; refuse rather than act without identity.
  if (auth?.scheme !== scheme) throw fail('not_authenticated');
  return auth as Extract<Auth, { scheme: S }>;
}
