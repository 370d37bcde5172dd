/**
 * @module Single sign-on with a workspace's OpenID Connect identity provider.
 */
export { FLOW_COOKIE, FLOW_TTL_MS } from './flow.ts';
export { createSsoService, type SsoService } from './service.ts';
export { REDIRECT_PATH } from './settings.ts';
