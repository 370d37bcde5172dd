/**
 * @module A link that sets up two-step verification (`POST /invitations/accept` for a new account,
 * `POST /account-resets/redeem` of `totp` or `both`) as a person uses it: the first request answers `202` with
 * the secret, the same request again with the authenticator's current code completes it.
 */
import { totpCode } from '../../server/src/domain/sessions/totp.ts';

/**
 * Sends `body`; on a `202`, sends it again with the current code of the secret it answered (at `clock`'s now).
 * Answers the last response: the `200` (or the refusal) of the completing request, or the first one's when it was
 * not a `202` (an existing account's acceptance, a password reset, a refusal).
 */
export async function completeTwoStep(
  send: (body: Record<string, unknown>) => Response | Promise<Response>,
  clock: { now(): Date },
  body: { token: string; password: string },
): Promise<Response> {
  const first = await send(body);
  if (first.status !== 202) return first;
  const { totpSecret } = (await first.json()) as { totpSecret: string };
  return send({ ...body, totpCode: totpCode(totpSecret, clock.now()) });
}
