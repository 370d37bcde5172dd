/**
 * @module Single sign-on of a workspace with its OpenID Connect identity provider: the owner's settings (settings.ts),
 * the sign-in's start (the provider's authorization URL and the sealed flow cookie, flow.ts) and its finish (the code
 * exchanged and the ID token checked, oidc.ts; the email verified and of an allowed domain), which opens the session a
 * password sign-in opens (domain/sessions/sso-sign-in.ts).
 */
import type { SecureContextOptions } from 'node:tls';
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { selectRows, tableRow, text } from '../../store/rows.ts';
import type { AuditContext } from '../audit/index.ts';
import { createPinnedFetch } from '../integrations/pinned-fetch.ts';
import type { SessionService } from '../sessions/index.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DestinationPolicy } from '../webhooks/ssrf-guard.ts';
import { FLOW_TTL_MS, openFlow, sealFlow } from './flow.ts';
import { authorizationUrl, discover, exchangeCode, newChecks } from './oidc.ts';
import {
  REDIRECT_PATH,
  readSettings,
  removeSettings,
  requireOwner,
  type SettingsRow,
  settingsForDomain,
  type SsoSettings,
  type SsoSettingsUpdate,
  toSettings,
  writeSettings,
} from './settings.ts';

export type SsoService = ReturnType<typeof createSsoService>;

/** The session's caller as the settings' routes know it. */
interface Caller {
  workspaceId: string;
  role: string;
}

/** What the finish receives: the provider's parameters as the browser came back with them. */
export interface SsoCallback {
  state: string;
  code?: string | undefined;
  iss?: string | undefined;
  error?: string | undefined;
  errorDescription?: string | undefined;
}

export function createSsoService(deps: {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  policy: DestinationPolicy;
  sessions: Pick<SessionService, 'signInBySso'>;
  /** Extra trust roots (a test provider's self-signed certificate). */
  ca?: SecureContextOptions['ca'];
}) {
  const { db, clock, secretBox } = deps;
  const fetch = createPinnedFetch({ policy: deps.policy, ...(deps.ca !== undefined ? { ca: deps.ca } : {}) });
  const providerOf = (settings: SettingsRow) => ({
    issuer: settings.issuer,
    clientId: settings.client_id,
    clientSecret: secretBox.open(settings.client_secret_encrypted),
  });

  return {
    /** @throws role_forbidden for anyone but an owner, not_found without single sign-on */
    async get(caller: Caller): Promise<SsoSettings> {
      requireOwner(caller.role);
      const found = await readSettings(db, caller.workspaceId);
      if (!found) throw fail('not_found', 'This workspace has no single sign-on.');
      return toSettings(found);
    },

    /** @throws role_forbidden for anyone but an owner, invalid_body for a refused issuer or a first setup without secret */
    async update(caller: Caller, update: SsoSettingsUpdate, audit?: AuditContext): Promise<SsoSettings> {
      requireOwner(caller.role);
      return writeSettings({ db, clock, secretBox, policy: deps.policy }, caller.workspaceId, update, audit);
    },

    /** @throws role_forbidden for anyone but an owner, not_found without single sign-on */
    async remove(caller: Caller, audit?: AuditContext): Promise<void> {
      requireOwner(caller.role);
      await removeSettings({ db, clock }, caller.workspaceId, audit);
    },

    /**
     * The identity provider's authorization URL for the workspace that signs in the email's domain, and the sealed
     * flow for the `service_sso` cookie. `origin` is the panel's address (the redirect URI's).
     * @throws not_found when no workspace signs in the domain, invalid_body when several do and none was named,
     *   service_unavailable when the provider cannot be reached
     */
    async start(request: { email: string; workspaceId?: string | undefined }, origin: string): Promise<{ authorizationUrl: string; flow: string }> {
      const settings = await settingsOf(db, request);
      const config = await discover(providerOf(settings), fetch);
      const checks = await newChecks();
      const redirectUri = `${origin}${REDIRECT_PATH}`;
      const flow = sealFlow(secretBox, {
        workspaceId: settings.workspace_id,
        issuer: settings.issuer,
        redirectUri,
        state: checks.state,
        nonce: checks.nonce,
        codeVerifier: checks.codeVerifier,
        expiresAt: clock.now().getTime() + FLOW_TTL_MS,
      });
      return { authorizationUrl: authorizationUrl(config, { redirectUri, ...checks }), flow };
    },

    /**
     * Finishes the sign-in of the flow cookie: the state checked, the code exchanged, the ID token checked, its email
     * verified and of an allowed domain; then the session.
     * @throws not_authenticated naming what failed, tenant_forbidden / payment_not_completed (signInBySso),
     *   service_unavailable when the provider cannot be reached
     */
    async finish(callback: SsoCallback, cookie: string | undefined, audit?: AuditContext) {
      const flow = openFlow(secretBox, cookie, callback.state, clock.now());
      const settings = await readSettings(db, flow.workspaceId);
      if (!settings || settings.issuer !== flow.issuer) {
        throw fail('not_authenticated', "The workspace's single sign-on changed while you signed in; start again.");
      }
      const config = await discover(providerOf(settings), fetch);
      const callbackUrl = new URL(flow.redirectUri);
      const returned: [string, string | undefined][] = [
        ['code', callback.code],
        ['state', callback.state],
        ['iss', callback.iss],
        ['error', callback.error],
        ['error_description', callback.errorDescription],
      ];
      for (const [name, value] of returned) if (value !== undefined) callbackUrl.searchParams.set(name, value);
      const identity = await exchangeCode(config, callbackUrl, flow);
      if (!identity.email) throw fail('not_authenticated', 'The identity provider did not say your email address (scope `email`).');
      if (!identity.emailVerified) throw fail('not_authenticated', 'The identity provider has not verified this email address.');
      const domain = domainOf(identity.email);
      if (!settings.allowed_domains.includes(domain)) throw fail('not_authenticated', 'This workspace does not sign in addresses of this email domain.');
      return deps.sessions.signInBySso(
        { workspaceId: settings.workspace_id, email: identity.email, jitRole: settings.jit_membership ? settings.default_role : null },
        audit,
      );
    },
  };
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** A workspace the person signing in belongs to. */
const membershipWorkspace = tableRow('memberships', { workspace_id: text });

/** The one workspace whose single sign-on the sign-in starts with. */
async function settingsOf(db: Db, request: { email: string; workspaceId?: string | undefined }): Promise<SettingsRow> {
  const all = await settingsForDomain(db, domainOf(request.email));
  const named = request.workspaceId === undefined ? all : all.filter((s) => s.workspace_id === request.workspaceId);
  if (named.length === 0) throw fail('not_found', 'No workspace signs in addresses of this email domain with single sign-on.');
  if (named.length === 1) return named[0]!;
  // Several workspaces admit the domain: the one the person already belongs to, if it is one.
  const memberships = await selectRows(
    db,
    membershipWorkspace,
    `SELECT m.workspace_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE lower(u.email) = $1`,
    [request.email.trim().toLowerCase()],
  );
  const mine = named.filter((s) => memberships.some((m) => m.workspace_id === s.workspace_id));
  if (mine.length === 1) return mine[0]!;
  throw fail('invalid_body', 'Several workspaces sign in addresses of this email domain: name one with workspaceId.', { param: 'workspaceId' });
}
