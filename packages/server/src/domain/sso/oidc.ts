/**
 * @module The OpenID Connect relying party (openid-client): discovery of the workspace's identity provider, the
 * authorization URL (code flow, PKCE S256, state and nonce), and the code's exchange with the ID token's checks
 * (signature, issuer, audience, expiry, nonce); the email is the ID token's, or the UserInfo endpoint's for the same
 * subject when the provider keeps it out of the ID token. Every request to the identity provider goes through the pinned fetch of
 * integrations (domain/integrations/pinned-fetch.ts): HTTPS only, the webhook destinations' address rules at every
 * request with the address pinned for the connection (WEBHOOK_ALLOW_HOSTS admits a loopback provider in tests), no
 * redirect followed, a bounded answer.
 */
import * as client from 'openid-client';
import { fail, retryHints } from '../../errors.ts';
import type { PinnedFetch } from '../integrations/pinned-fetch.ts';

/** What single sign-on asks the identity provider for: who the person is and their email. */
const SCOPE = 'openid email';
/** How long one request to the identity provider may take. */
const TIMEOUT_SEC = 10;

export interface ProviderClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** The claims single sign-on reads from a verified ID token. */
export interface VerifiedIdentity {
  email: string | undefined;
  emailVerified: boolean;
}

/**
 * The identity provider's configuration (its discovery document).
 * @throws service_unavailable when it cannot be reached or its discovery document is unusable
 */
export async function discover(provider: ProviderClient, fetch: PinnedFetch): Promise<client.Configuration> {
  try {
    return await client.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, undefined, {
      [client.customFetch]: (url, options) =>
        fetch(url, { method: options.method, headers: options.headers, body: options.body as RequestInit['body'], signal: options.signal ?? null }),
      timeout: TIMEOUT_SEC,
    });
  } catch {
    throw fail(
      'service_unavailable',
      "The workspace's identity provider cannot be reached or answered no usable configuration; try again later.",
      {},
      retryHints(5_000, true),
    );
  }
}

export function authorizationUrl(config: client.Configuration, request: { redirectUri: string; state: string; nonce: string; codeChallenge: string }): string {
  return client
    .buildAuthorizationUrl(config, {
      redirect_uri: request.redirectUri,
      scope: SCOPE,
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    })
    .toString();
}

/** A fresh state, nonce and PKCE verifier with its challenge. */
export async function newChecks(): Promise<{ state: string; nonce: string; codeVerifier: string; codeChallenge: string }> {
  const codeVerifier = client.randomPKCECodeVerifier();
  return { state: client.randomState(), nonce: client.randomNonce(), codeVerifier, codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier) };
}

/**
 * Exchanges the code the browser came back with (`callbackUrl`: the redirect URI with the returned parameters) and
 * checks the ID token.
 * @throws not_authenticated saying what failed (the provider's error, a code it refused, a token that does not check
 *   out, a nonce of another sign-in), service_unavailable when the provider cannot be reached
 */
export async function exchangeCode(
  config: client.Configuration,
  callbackUrl: URL,
  checks: { state: string; nonce: string; codeVerifier: string },
): Promise<VerifiedIdentity> {
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw refusal(error);
  }
  const claims = tokens.claims();
  if (!claims) throw fail('not_authenticated', 'The identity provider answered no ID token.');
  if (typeof claims.email === 'string') return { email: claims.email, emailVerified: claims.email_verified === true };
  // A provider that keeps the scope's claims out of the ID token answers them at its UserInfo endpoint, for the
  // same subject (openid-client checks it).
  let info: Awaited<ReturnType<typeof client.fetchUserInfo>>;
  try {
    info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  } catch (error) {
    throw refusal(error);
  }
  return { email: typeof info.email === 'string' ? info.email : undefined, emailVerified: info.email_verified === true };
}

/** What went wrong at the identity provider, in words safe to show (its error code, never its description). */
function refusal(error: unknown): Error {
  if (error instanceof client.AuthorizationResponseError) {
    return fail('not_authenticated', `The identity provider did not sign you in (${safeCode(error.error)}).`);
  }
  if (error instanceof client.ResponseBodyError) {
    return fail('not_authenticated', `The identity provider refused the sign-in's code (${safeCode(error.error)}); start again.`);
  }
  const code = (error as { code?: unknown }).code;
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claimOf(error) === 'nonce') {
    return fail('not_authenticated', "The identity provider's ID token belongs to another sign-in (its nonce differs); start again.");
  }
  if (typeof code === 'string' && code.startsWith('OAUTH_')) return fail('not_authenticated', "The identity provider's answer did not check out; start again.");
  return fail('service_unavailable', "The workspace's identity provider cannot be reached; try again later.", {}, retryHints(5_000, true));
}

/** The ID token claim a comparison failed on, from the error's chain of causes (openid-client wraps oauth4webapi's). */
function claimOf(error: unknown): unknown {
  for (let at: unknown = error, depth = 0; at && typeof at === 'object' && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    const claim = (at as { claim?: unknown }).claim;
    if (claim !== undefined) return claim;
  }
  return undefined;
}

/** An OAuth error code as the provider sent it, if it has the standard's shape. */
function safeCode(code: string): string {
  return /^[a-z_]{1,64}$/.test(code) ? code : 'error';
}
