/**
 * @module One single sign-on in flight: its `state`, `nonce` and PKCE verifier, the workspace, issuer and redirect URI
 * it started with, and when it expires. Kept in the browser as the `service_sso` cookie, sealed with the deployment's
 * secret box (AES-256-GCM: nobody reads or alters it), so any instance finishes what another started and the store
 * keeps nothing. The state sent to the identity provider must come back equal to the cookie's; the nonce must be the
 * ID token's.
 */
import { constantTimeEqual } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';

export const FLOW_COOKIE = 'service_sso';
/** How long a sign-in may take at the identity provider. */
export const FLOW_TTL_MS = 10 * 60_000;

export interface SsoFlow {
  workspaceId: string;
  issuer: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

const AGAIN = 'This sign-in was not started in this browser, has expired or was already used; start again.';

export function sealFlow(box: SecretBox, flow: SsoFlow): string {
  return box.seal(JSON.stringify(flow));
}

/**
 * The flow of the cookie, when the returned `state` is its own and it has not expired.
 * @throws not_authenticated otherwise
 */
export function openFlow(box: SecretBox, cookie: string | undefined, state: string, now: Date): SsoFlow {
  if (!cookie) throw fail('not_authenticated', AGAIN);
  let flow: SsoFlow;
  try {
    flow = JSON.parse(box.open(cookie)) as SsoFlow;
  } catch {
    throw fail('not_authenticated', AGAIN);
  }
  if (typeof flow.state !== 'string' || !constantTimeEqual(flow.state, state)) throw fail('not_authenticated', AGAIN);
  if (!(flow.expiresAt > now.getTime())) throw fail('not_authenticated', AGAIN);
  return flow;
}
