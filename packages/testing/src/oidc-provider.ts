/**
 * @module A real OpenID Connect identity provider on loopback for tests: the `oidc-provider` package over HTTPS (a
 * self-signed certificate, trusted by the caller through `ca` or NODE_EXTRA_CA_CERTS), with one confidential client
 * and one person at a time (`user`: the email and whether it is verified). Its sign-in needs no page: the interaction
 * signs `user` in and grants `openid email` at once, or refuses with `access_denied` when `deny` is set. `follow`
 * walks a browser's redirects through it (with its cookies) until the redirect URI, for tests without a browser.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { TestCertificate } from './https-receiver.ts';

export interface TestIdentityProvider {
  /** `https://127.0.0.1:<port>`, the issuer. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The person the next sign-in signs in. */
  user: { email: string; emailVerified: boolean };
  /** Refuse the next sign-ins with `access_denied`. */
  deny: boolean;
  /** How many requests the provider has answered (its discovery, token and key requests included). */
  requests: number;
  /**
   * Follows the redirects of `authorizationUrl` through the provider, as a browser would, and answers the URL it
   * finally sends the browser to (the redirect URI with `code`, `state` and `iss`, or `error`).
   */
  follow(authorizationUrl: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startTestIdentityProvider(options: {
  certificate: TestCertificate;
  /** The redirect URIs the client registered (the service's `/panel/sso/callback` on its address). */
  redirectUris: string[];
  user?: { email: string; emailVerified: boolean };
}): Promise<TestIdentityProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer({ key: options.certificate.key, cert: options.certificate.cert }, (req, res) => {
    idp.requests += 1;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'service-panel';
  const clientSecret = 'a-client-secret-of-the-test-provider';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'email'],
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, email: idp.user.email, email_verified: idp.user.emailVerified }),
    }),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    pkce: { required: () => true },
  });
  const callback = provider.callback();
  handler = (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void interact(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    callback(req, res);
  };

  /** Signs `user` in and grants the client `openid email`, or refuses. */
  async function interact(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (idp.deny) {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The person declined.' }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: `sub-${idp.user.email}` } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope('openid email');
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const idp: TestIdentityProvider = {
    issuer,
    clientId,
    clientSecret,
    user: options.user ?? { email: 'dana@northwind.example', emailVerified: true },
    deny: false,
    requests: 0,
    async follow(authorizationUrl) {
      const jar = new Map<string, string>();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 12; hop++) {
        if (url.origin !== issuer) return url;
        const { status, location, cookies } = await get(url, options.certificate.cert, [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
        for (const cookie of cookies) {
          const [pair] = cookie.split(';');
          const at = pair!.indexOf('=');
          jar.set(pair!.slice(0, at), pair!.slice(at + 1));
        }
        if (status < 300 || status >= 400 || !location) throw new Error(`the provider answered ${status} at ${url.pathname}`);
        url = new URL(location, url);
      }
      throw new Error('too many redirects at the provider');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return idp;
}

function get(url: URL, ca: string, cookie: string): Promise<{ status: number; location: string | undefined; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'GET', ca, headers: cookie ? { cookie } : {} }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location, cookies: res.headers['set-cookie'] ?? [] });
    });
    req.on('error', reject);
    req.end();
  });
}
