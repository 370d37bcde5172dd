/**
 * @module Single sign-on: the owner's settings (`/workspace/sso`) and the sign-in (`POST /auth/sso/start`, then
 * `POST /auth/sso/callback` from the panel's page at the redirect URI). The sign-in in flight rides the `service_sso`
 * cookie (sealed, 10 minutes, only sent to `/auth/sso`); the finish answers as login does (routes/auth.ts).
 */
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { FLOW_COOKIE, FLOW_TTL_MS } from '../domain/sso/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { answerSession, COOKIE_OPTIONS } from './auth.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const FLOW_COOKIE_OPTIONS = { ...COOKIE_OPTIONS, path: '/auth/sso' } as const;

const getSsoSettings: Handler<'getSsoSettings'> = async (c, _input, { sso }) => {
  return { status: 200, body: await sso.get(authOf(c, 'adminSession')) };
};

const updateSsoSettings: Handler<'updateSsoSettings'> = async (c, { body }, services) => {
  return { status: 200, body: await services.sso.update(authOf(c, 'adminSession'), body, auditOf(c, services)) };
};

const removeSsoSettings: Handler<'removeSsoSettings'> = async (c, _input, services) => {
  await services.sso.remove(authOf(c, 'adminSession'), auditOf(c, services));
  return { status: 204 };
};

const startSsoSignIn: Handler<'startSsoSignIn'> = async (c, { body }, services) => {
  const started = await services.sso.start(body, publicOrigin(c.req.url, c.req.header('x-forwarded-proto'), services.config.trustProxy));
  setCookie(c, FLOW_COOKIE, started.flow, { ...FLOW_COOKIE_OPTIONS, maxAge: FLOW_TTL_MS / 1000 });
  keepUnredacted(c, started.authorizationUrl);
  c.header('Cache-Control', 'no-store');
  return { status: 200, body: { authorizationUrl: started.authorizationUrl } };
};

const finishSsoSignIn: Handler<'finishSsoSignIn'> = async (c, { body }, services) => {
  const cookie = getCookie(c, FLOW_COOKIE);
  // One sign-in, one try: the flow is gone whatever the outcome.
  deleteCookie(c, FLOW_COOKIE, FLOW_COOKIE_OPTIONS);
  const session = await services.sso.finish(body, cookie, auditOf(c, services));
  return { status: 200, body: answerSession(c, session) };
};

/**
 * The address the browser sees the service at, for the redirect URI: the request's, with the scheme the proxy says
 * when TRUST_PROXY believes one (behind a proxy that ends TLS the server itself hears plain HTTP).
 */
function publicOrigin(url: string, forwardedProto: string | undefined, trustProxy: number): string {
  const origin = new URL(url);
  const proto = forwardedProto?.split(',')[0]?.trim();
  if (trustProxy > 0 && (proto === 'https' || proto === 'http')) origin.protocol = `${proto}:`;
  return origin.origin;
}

export const ssoHandlers = { getSsoSettings, updateSsoSettings, removeSsoSettings, startSsoSignIn, finishSsoSignIn } satisfies Partial<Handlers>;
