/**
 * @module The Hono environment of the app: what middleware leaves on the context for handlers,
 * composed from the variables each middleware exports (as Hono's own `RequestIdVariables`,
 * `JwtVariables`). A new variable is declared next to the middleware that sets it, then added here.
 */
import type { AdmissionVariables } from './middleware/admission/index.ts';
import type { AuthVariables } from './middleware/auth/index.ts';
import type { InboundVariables } from './middleware/inbound/index.ts';
import type { ObserveVariables } from './middleware/observe/index.ts';
import type { RateLimitVariables } from './middleware/rate-limit/index.ts';
import type { RedactVariables } from './middleware/redact/index.ts';
import type { RequestIdVariables } from './middleware/request-id/index.ts';
import type { RouteVariables } from './middleware/route/index.ts';
import type { ValidateVariables } from './middleware/validate/index.ts';

// What the route handlers import from here, declared next to the middleware that sets it.
export type { Auth } from './middleware/auth/index.ts';

type AppVariables = AdmissionVariables &
  RequestIdVariables &
  ObserveVariables &
  RouteVariables &
  RedactVariables &
  RateLimitVariables &
  AuthVariables &
  ValidateVariables &
  InboundVariables;

export type AppEnv = { Variables: AppVariables };
