/**
 * @module Admission control: a request that would only wait, or that would take more than its party's share of
 * the instance, is refused with `503 service_unavailable` and `Retry-After: 1` (`Retry-After-Ms: 1000`,
 * `X-Should-Retry: true`: nothing was done for it), instead of joining a queue it would leave seconds later: at
 * once at the hard bound, after that second at a share (`overShare`).
 * Health routes are never refused (a load balancer must keep seeing the instance alive).
 *
 * Two stages (the shares and their bound: ./shares.ts):
 *
 * 1. `admission`, mounted first: the hard bound of requests in flight (`MAX_REQUESTS_IN_FLIGHT`), before
 *    anything else is done (no log line of its own, no redaction, no routing): under overload clients that
 *    retry at once send refusals at the rate the process can answer them, and every microsecond a refusal
 *    costs is taken from the requests already admitted. The request gets a ticket (`c.get('admission')`),
 *    charged at once to the workspace its credential was last verified for when this instance remembers it
 *    (`credentialDigest`), whose share is then judged here.
 * 2. The party's share, as soon as the party is known: `admitCaller` right after authentication (the
 *    workspace of the credential), `admitAnonymous` first on a route that takes no credential (the client
 *    address). Authentication of a cached credential reads no store, so a flooding workspace is still refused
 *    cheaply; a failed authentication never takes a share. On a route without a credential the party is known
 *    at stage one already (`anonymous`): an address at its share is refused there, before the middleware in
 *    between run (a flood of refused slow bodies spends the event loop's time on each of them).
 *
 * Once admitted, the rest of the request runs as its party's (`asStoreParty`): the embedded store sends its
 * statements from one queue per party in turn (store/fair-queue.ts). Before stage two, as its credential's last
 * workspace's, else as an unauthenticated request's.
 *
 * Refusals are counted (`refused`, the metrics) instead of logged one by one. A request holds its place from
 * its admission until its response begins: a stream that has sent its headers no longer counts (it holds a
 * connection, not the store).
 */
import { hash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { retryHints } from '../../errors.ts';
import type { Auth, AuthVariables } from '../auth/index.ts';
import { clientIp, clientKey } from '../rate-limit/client-ip.ts';
import { isAcceptableRequestId, newRequestId, type RequestIdVariables } from '../request-id/index.ts';
import { asStoreParty, UNAUTHENTICATED_PARTY, workspaceParty } from '../../store/fair-queue.ts';
import type { AdmissionShares, AdmissionRefusal, Party, Ticket } from './shares.ts';

export { AdmissionShares, type AdmissionLimits, type AdmissionRefusal, type AdmissionSnapshot } from './shares.ts';

/** Context variables this middleware provides: the request's place, and whether a share refused it. */
export type AdmissionVariables = {
  admission?: Ticket;
  admissionRefused?: boolean;
  /** A digest of the request's `Authorization` header, taken once at stage one (`credentialDigest`). */
  admissionCredential?: string;
};

/** Seconds a refused client waits: the queue of a loaded instance moves in well under one. */
export const ADMISSION_RETRY_AFTER_SEC = 1;

/** How long a caller over its share waits for its `503`: its `Retry-After`, spent before the answer. */
export const SHARE_REFUSAL_DELAY_MS = ADMISSION_RETRY_AFTER_SEC * 1000;

export const AT_CAPACITY_MESSAGE = 'The service is at capacity; retry shortly.';

type Env = { Variables: AdmissionVariables & AuthVariables & Partial<RequestIdVariables> };

/** Stage one: the hard bound, and the ticket the later stage charges to a party. */
export function admission(
  shares: AdmissionShares,
  deps: {
    exempt: (path: string) => boolean;
    refused?: (reason: AdmissionRefusal) => void;
    /** Whether a route takes no credential (its party is the client address), and how that address is read. */
    anonymous?: { route: (c: Context) => boolean; trustProxy: number };
  },
): MiddlewareHandler<Env> {
  return async function admission(c, next) {
    if (deps.exempt(c.req.path)) return next();
    const credential = credentialDigest(c);
    const hint = credential === undefined ? undefined : shares.hint(credential);
    const ticket = shares.enter(hint);
    if (typeof ticket === 'string') {
      deps.refused?.(ticket);
      // A credential known to be of a workspace over its share (of the requests or of the store's queue) is
      // refused here as it would be after authentication: after the wait. The hard bound answers at once.
      return hint !== undefined && ticket !== 'in_flight' ? overShare(c, shares) : atCapacity(c);
    }
    const anonymous = deps.anonymous;
    if (anonymous?.route(c)) {
      const refusal = shares.refusesAddress(addressOf(c, anonymous.trustProxy));
      if (refusal) {
        deps.refused?.(refusal);
        shares.leave(ticket);
        return overShare(c, shares);
      }
    }
    c.set('admission', ticket);
    if (credential !== undefined) c.set('admissionCredential', credential);
    try {
      // Until stage two names its party, the request's statements (its authentication's reads) wait in the queue of
      // the workspace its credential was last verified for, else the unauthenticated requests': never the background
      // work's, where the delivery worker's claims wait.
      await asStoreParty(hint ?? UNAUTHENTICATED_PARTY, next);
    } finally {
      shares.leave(ticket);
    }
    // Stage two refused it over its share: its answer is made and every later middleware has returned, so the
    // wait before it is sent holds this frame alone, not the whole chain's.
    if (c.get('admissionRefused')) await shareRefusalWait();
  };
}

/** Stage two on a route with a credential: after authentication, the workspace's (or the operator's) share. */
export function admitCaller(shares: AdmissionShares, refused?: (reason: AdmissionRefusal) => void): MiddlewareHandler {
  return async function admitCaller(c: Context<Env>, next) {
    const party = partyOf(c.get('auth'));
    if (!party) return next();
    if (!admitted(c, shares, party, refused)) return refusedOverShare(c, shares);
    const credential = c.get('admissionCredential');
    if (credential !== undefined) shares.remember(credential, party.id);
    // Its statements wait in its own queue of the store's (store/fair-queue.ts).
    await asStoreParty(party.id, next);
  };
}

/** Stage two on a route without a credential: the client address's part of the unauthenticated share. */
export function admitAnonymous(shares: AdmissionShares, options: { trustProxy: number; refused?: (reason: AdmissionRefusal) => void }): MiddlewareHandler {
  return async function admitAnonymous(c: Context<Env>, next) {
    const party: Party = { kind: 'address', id: addressOf(c, options.trustProxy) };
    if (!admitted(c, shares, party, options.refused)) return refusedOverShare(c, shares);
    // The unauthenticated requests share one queue of the store's, as they share one group of the shares.
    await asStoreParty(UNAUTHENTICATED_PARTY, next);
  };
}

/** The party of a request without a credential: its client address, keyed as the rate limiter keys it. */
function addressOf(c: Context, trustProxy: number): string {
  return clientKey(clientIp(c, { trustProxy }));
}

/**
 * The key of stage one's guess of the request's workspace (the group its `Authorization` header was verified for
 * before): a digest of the header, so the credential itself is never kept. Authentication still decides.
 */
function credentialDigest(c: Context<Env>): string | undefined {
  const bearer = c.req.header('authorization');
  return bearer ? hash('sha256', bearer, 'base64url') : undefined;
}

function admitted(c: Context<Env>, shares: AdmissionShares, party: Party, refused?: (reason: AdmissionRefusal) => void): boolean {
  const ticket = c.get('admission');
  if (!ticket) return true;
  const refusal = shares.claim(ticket, party);
  if (!refusal) return true;
  refused?.(refusal);
  // Counted, not logged one by one (middleware/observe leaves these out of the log).
  c.set('admissionRefused', true);
  return false;
}

function partyOf(auth: Auth | undefined): Party | undefined {
  if (!auth) return undefined;
  if (auth.scheme === 'operatorToken') return { kind: 'workspace', id: 'operator' };
  return { kind: 'workspace', id: workspaceParty(auth.workspaceId) };
}

/**
 * A caller over its share is answered after {@link SHARE_REFUSAL_DELAY_MS}, its place given back first: a client
 * that retries at once (a load generator, a loop without backoff) would otherwise turn refusals into a flood of
 * its own, every answer taking the event loop from the other parties' requests. The wait holds a connection and
 * a timer, no place of the shares and no store. Stage one, refusing on its credential's hint, waits here.
 */
async function overShare(c: Context<Env>, shares: AdmissionShares): Promise<Response> {
  const answer = refusedOverShare(c, shares);
  await shareRefusalWait();
  return answer;
}

/**
 * Stage two's refusal: the answer at once, its place given back; stage one, the outermost middleware, waits
 * {@link SHARE_REFUSAL_DELAY_MS} before it is sent. Waiting here instead kept every middleware's frame and
 * closures alive for that second (a heap snapshot under a flood of refused slow bodies: 22 suspended async
 * functions per waiting request, 10 with the wait in stage one; docs/performance.md).
 */
function refusedOverShare(c: Context<Env>, shares: AdmissionShares): Response {
  const ticket = c.get('admission');
  if (ticket) shares.leave(ticket);
  return atCapacity(c);
}

const shareRefusalWait = () => new Promise((resolve) => setTimeout(resolve, SHARE_REFUSAL_DELAY_MS));

/**
 * The error table's body for a 5xx (ServerError), with the request id echoed or made as request-id does. Made with
 * `c.json`: past stage one the body's redaction serialises it once (middleware/redact), instead of reading a body
 * back, parsing it and wrapping it again (about a tenth of a refusal's CPU, profiled).
 */
function atCapacity(c: Context<Env>): Response {
  const sent = c.get('requestId') ?? c.req.header('x-request-id');
  const requestId = isAcceptableRequestId(sent) ? sent : newRequestId();
  return c.json({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE, requestId }, 503, {
    ...retryHints(ADMISSION_RETRY_AFTER_SEC * 1000, true),
    'X-Request-Id': requestId,
  });
}
