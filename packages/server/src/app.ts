/**
 * @module The HTTP app, built from the contract: every route of generated/routes.ts is mounted
 * with its authentication, limits and validators in front of its handler.
 *
 *   [traces on: the request's server span (middleware/trace)]
 *   admission (503 at once past the in-flight bound; not on health routes)
 *   -> request-id -> redaction of every body -> error boundary -> [route] its metadata (operationId, per-IP class)
 *   -> without a credential: the client address's admission share (503) -> per-IP rate limit of its class
 *   -> authenticate (then the workspace's raised per-address ceiling, if any) -> the workspace's admission share (503)
 *   -> per-workspace rate limit -> validate -> handler (501 not_implemented until built)
 *   unknown path -> per-IP (API's) -> 404 not_found; known path, other method -> per-IP (API's) -> 405 method_not_allowed + Allow
 *   every failure -> error mapper (the spec's error body)
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.ts';
import { routes as contractRoutes } from './contract.ts';
import { fail } from './errors.ts';
import { authenticate } from './middleware/auth/index.ts';
import { errorBoundary, errorMapper, notFound } from './middleware/errors/index.ts';
import { byClientIp, PER_IP, PER_IP_BY_CLASS, PER_WORKSPACE, rateLimit } from './middleware/rate-limit/index.ts';
import { raisedIpCeiling } from './middleware/rate-limit/raised-ip.ts';
import { SESSION_COOKIE } from './domain/sessions/index.ts';
import { getCookie } from 'hono/cookie';
import { matchedRoutes } from 'hono/route';
import { privateBeta } from './middleware/private-beta/index.ts';
import { admission, admitAnonymous, admitCaller, AdmissionShares, type AdmissionRefusal } from './middleware/admission/index.ts';
import { customerDataOf, redactBody } from './middleware/redact/index.ts';
import { requestId } from './middleware/request-id/index.ts';
import { observe } from './middleware/observe/index.ts';
import { routeMetadata, type RouteLimitClass } from './middleware/route/index.ts';
import { validate } from './middleware/validate/index.ts';
import { cors } from './middleware/cors/index.ts';
import { traceRequests } from './middleware/trace/index.ts';
import { tracer } from './tracing/index.ts';
import { inboundWebhook } from './middleware/inbound/index.ts';
import { handlers } from './routes/index.ts';
import { mountPanel } from './routes/panel.ts';
import type { LooseAnswer, LooseHandler } from './routes/handler.ts';
import type { RouteSpec } from './routes/route-spec.ts';
import { buildServices, type Deps, type Services } from './services.ts';

export type { Deps } from './services.ts';

export interface CreatedApp {
  app: Hono<AppEnv>;
  services: Services;
}

export interface AppOptions {
  /** The contract's routes by default; tests add synthetic ones. */
  routes?: readonly RouteSpec[];
  /** The built handlers by default; tests add synthetic ones (which may answer a `Response` directly). */
  handlers?: Readonly<Partial<Record<string, LooseHandler>>>;
}

export function createApp(deps: Deps, options: AppOptions = {}): CreatedApp {
  const routes = options.routes ?? contractRoutes;
  const operations: Readonly<Partial<Record<string, LooseHandler>>> = options.handlers ?? handlers;
  // Admission control's places and shares (middleware/admission/shares.ts); none unless configured.
  const shares = deps.admission ? new AdmissionShares(deps.admission, () => deps.db.queued?.() ?? 0) : undefined;
  const services = buildServices(shares ? { ...deps, saturation: shares } : deps);
  const app = new Hono<AppEnv>();
  const refused = refusalCounter(services);

  // With traces on (tracing/sdk.ts, started before the app), the server span of every request, around all the rest;
  // off, no middleware at all.
  const traces = tracer();
  if (traces) {
    const paths = new Map(routes.map((route) => [route.operationId, route.path]));
    app.use(traceRequests(traces, (operationId) => paths.get(operationId)));
  }
  // First: past the hard bound, a request answers 503 at once instead of waiting in a queue; its party's share
  // is taken once the party is known (admitAnonymous, admitCaller below).
  const anonymousShare: MiddlewareHandler<AppEnv> = shares ? admitAnonymous(shares, { trustProxy: services.config.trustProxy, refused }) : passThrough;
  const callerShare: MiddlewareHandler<AppEnv> = shares ? admitCaller(shares, refused) : passThrough;
  if (shares) {
    services.metrics?.observeAdmission(shares);
    const healthPaths = new Set(routes.filter((route) => route.policy.operations).map((route) => route.path));
    app.use(
      admission(shares, {
        exempt: (path) => healthPaths.has(path),
        refused,
        // A route without a credential is one whose chain holds `anonymousShare` (below). The router has matched the
        // request already (Hono matches every route before the first middleware runs); the CORS middleware reads the
        // same match.
        anonymous: { route: (c) => matchedRoutes(c).some((route) => route.handler === anonymousShare), trustProxy: services.config.trustProxy },
      }),
    );
  }
  app.use(requestId());
  // One log line and the request metrics per request, whatever answers it.
  app.use(observe({ logger: services.logger, metrics: services.metrics, trustProxy: services.config.trustProxy }));
  // Before the limits and authentication: a preflight consumes no quota and needs no credential.
  app.use(cors({ origins: services.config.corsOrigins, methodsByPath: honoMethodsByPath(routes) }));
  // Engine and error text is redacted; the fields the contract marks `x-customer-data` are the customer's own.
  app.use(redactBody(services.redactor, customerDataOf(routes)));
  app.use(errorBoundary());
  const perIp = byClientIp({ trustProxy: services.config.trustProxy });
  // Each route's per-IP budget is that of its class (API, admin session, MCP, operator; see PER_IP_BY_CLASS), as
  // its first middleware set it from the contract (`x-ip-limit-class`); a request that matches no route (404,
  // 405) counts against the API's. Inbound webhooks have their own per-IP limit (per webhook, `rate_limited`),
  // applied after the body is read, as the spec orders it; health routes (`x-operations`) and the panel's pages
  // are outside every rate limit: a load balancer polls them often.
  const ipClassOf = (c: Context<AppEnv>): RouteLimitClass => c.get('ipLimitClass') ?? 'api';
  const observer = (limit: string) => ({
    refused: () => services.metrics?.limiterRefusals.inc({ limit }),
    backendFailed: () => services.metrics?.backendErrors.inc({ backend: 'redis' }),
  });
  const perIpLimit = rateLimit({
    limiter: services.limiter,
    ...PER_IP,
    logger: services.logger,
    observer: observer('ip'),
    limitOf: (c) => ipClassLimit(c),
    key: (c) => {
      const ipClass = ipClassOf(c);
      if (ipClass === 'inbound' || ipClass === 'unlimited') return undefined;
      return `${PER_IP_BY_CLASS[ipClass].bucket}:${perIp(c).slice('ip:'.length)}`;
    },
    // A request with a credential makes its per-IP hit after authentication, with its workspace's, in one
    // step of the limiter (one Redis round trip); its workspace may also have a raised per-address
    // ceiling (middleware/rate-limit/raised-ip.ts). Without a credential the hit is made here.
    deferHit: (c) => c.req.header('authorization') !== undefined || getCookie(c, SESSION_COOKIE) !== undefined,
  });
  const ipClassLimit = (c: Context): number => {
    const ipClass = ipClassOf(c);
    return ipClass === 'inbound' || ipClass === 'unlimited' ? PER_IP.limit : PER_IP_BY_CLASS[ipClass].limit;
  };
  const raisedIp = {
    limiter: services.limiter,
    logger: services.logger,
    observer: observer('ip'),
    defaultLimitOf: ipClassLimit,
    key: (c: Context, workspaceId: string) => {
      const ipClass = ipClassOf(c);
      if (ipClass === 'inbound' || ipClass === 'unlimited') return undefined;
      return `${PER_IP_BY_CLASS[ipClass].bucket}:${workspaceId}:${perIp(c).slice('ip:'.length)}`;
    },
  };

  // The workspace's own ceiling (600 unless its operator set another), carried by its credential.
  const perWorkspace = rateLimit({
    limiter: services.limiter,
    ...PER_WORKSPACE,
    limitOf: (c: Context<AppEnv>) => {
      const auth = c.get('auth');
      return auth && 'rpmLimit' in auth ? auth.rpmLimit : PER_WORKSPACE.limit;
    },
    logger: services.logger,
    observer: observer('workspace'),
    key: (c: Context<AppEnv>) => {
      const auth = c.get('auth');
      return auth && 'workspaceId' in auth ? `wksp:${auth.workspaceId}` : undefined;
    },
  });

  const beta = privateBeta({ enabled: services.config.privateBeta });
  const betaButPanel = privateBeta({ enabled: services.config.privateBeta, sessionPasses: true });
  for (const route of routes) {
    const method = route.method.toUpperCase();
    const path = honoPath(route.path);
    const handler = handle(operations[route.operationId], services);
    // First, what the middleware after it and the app-wide ones read about the route (middleware/route).
    const metadata = routeMetadata({ operationId: route.operationId, ipLimitClass: limitClassOf(route) });
    if (route.policy.operations) {
      // Health for the platform: no credential, no limit (the per-IP limit skips its class), no input.
      app.on(method, path, metadata, perIpLimit, handler);
      continue;
    }
    if (route.policy.inboundWebhook) {
      // Signed inbound events: their own front verifies, limits and validates (middleware/inbound).
      app.on(method, path, metadata, anonymousShare, perIpLimit, inboundWebhook(services, route.request), handler);
      continue;
    }
    app.on(
      method,
      path,
      metadata,
      // A route without a credential (sign-in, invitations, resets) is its client address's; the others are
      // their workspace's, once authenticated.
      takesNoCredential(route) ? anonymousShare : passThrough,
      perIpLimit,
      // Before authentication: during the private beta these routes read as absent, whatever the credential.
      route.policy.privateBeta ? (route.security.some((s) => s.scheme === 'adminSession') ? betaButPanel : beta) : passThrough,
      raisedIpCeiling(
        authenticate(services, {
          security: route.security,
          agentTargeted: route.policy.agentTargeted,
          anyRole: route.policy.anyRole,
          standingExempt: route.policy.standingExempt,
        }),
        raisedIp,
      ),
      callerShare,
      perWorkspace,
      validate(route.request),
      handler,
    );
  }

  // The web console's static files at /panel: outside the contract and the limits, same origin (routes/panel.ts).
  mountPanel(app);

  // After every route, any other request counts against the API's per-IP budget: a path the contract
  // knows asked with a method it does not list (405, below), or an unknown path (404).
  app.all('/*', perIpLimit);
  for (const [path, methods] of methodsByPath(routes)) app.all(honoPath(path), methodNotAllowed(methods));

  app.notFound(notFound());
  app.onError(
    errorMapper({
      log:
        deps.logError ??
        ((entry) =>
          services.logger.error({ requestId: entry.requestId, method: entry.method, path: entry.path, err: entry.error }, entry.message ?? 'unhandled error')),
      onStoreUnavailable: () => services.metrics?.backendErrors.inc({ backend: 'store' }),
    }),
  );
  return { app, services };
}

/** A route whose party is its client address (admission's `admitAnonymous`): one that takes no credential. */
function takesNoCredential(route: RouteSpec): boolean {
  return !route.policy.operations && (route.policy.inboundWebhook === true || route.security.length === 0);
}

/**
 * The last handler of a route: hands the handler the input `validate` left on the context and
 * turns its answer into the response.
 */
function handle(handler: LooseHandler | undefined, services: Services): (c: Context<AppEnv>) => Promise<Response> {
  return async function operation(c: Context<AppEnv>) {
    if (!handler) throw fail('not_implemented', 'This route is not available on this deployment yet.');
    // The input was parsed by this route's own schemas, the ones the handler's `Input` type is derived from.
    const answer = await handler(c, (c.get('valid') ?? { params: {}, query: {}, headers: {} }) as never, services);
    return respond(c, answer);
  };
}

/**
 * The limit class a route counts against: the contract's `x-ip-limit-class` (generated into
 * `policy.ipLimitClass`: admin for the session routes and the sign-in routes, mcp, operator, else api);
 * health routes none, inbound webhook routes their own front's.
 */
function limitClassOf(route: RouteSpec): RouteLimitClass {
  if (route.policy.operations) return 'unlimited';
  if (route.policy.inboundWebhook) return 'inbound';
  return route.policy.ipLimitClass;
}

function respond(c: Context<AppEnv>, answer: LooseAnswer): Response {
  if (answer instanceof Response) return answer;
  if (answer.stream) return answer.stream;
  if ('body' in answer) return c.json(answer.body, answer.status);
  return c.body(null, answer.status);
}

const passThrough: MiddlewareHandler<AppEnv> = async function passThrough(_c, next) {
  await next();
};

function methodNotAllowed(methods: string[]): MiddlewareHandler<AppEnv> {
  const allow = methods.join(', ');
  return async function methodNotAllowed() {
    throw fail('method_not_allowed', `Allowed methods: ${allow}.`, {}, { Allow: allow });
  };
}

/** Methods per OpenAPI path, upper-case; GET implies HEAD (Hono answers HEAD from GET). */
function methodsByPath(routes: readonly RouteSpec[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? [];
    methods.push(route.method.toUpperCase());
    if (route.method === 'get') methods.push('HEAD');
    byPath.set(route.path, methods);
  }
  return byPath;
}

/** The methods of each path as Hono mounts it, for OPTIONS answers. */
function honoMethodsByPath(routes: readonly RouteSpec[]): Map<string, string[]> {
  return new Map([...methodsByPath(routes)].map(([path, methods]) => [honoPath(path), methods]));
}

/** `/runs/{run_id}` -> `/runs/:run_id` */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * Counts refusals of the admission control, and says so in the log at most once every 10 s (how many
 * since the last line): one line per refusal would be written at the rate of the overload itself.
 */
function refusalCounter(services: Services): (reason: AdmissionRefusal) => void {
  let unlogged = 0;
  let lastLine = Number.NEGATIVE_INFINITY;
  return (reason) => {
    services.metrics?.admissionRefusals.inc({ reason });
    unlogged += 1;
    const now = performance.now();
    if (now - lastLine < 10_000) return;
    services.logger.warn({ refused: unlogged, reason }, 'at capacity: refusing requests with 503 (MAX_REQUESTS_IN_FLIGHT, MAX_STORE_QUEUE, fair shares)');
    unlogged = 0;
    lastLine = now;
  };
}
