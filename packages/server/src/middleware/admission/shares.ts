/**
 * @module The fair shares of admission control: who holds how many of the requests in flight, and whether one
 * more may be admitted. No Hono here: the middleware (./index.ts) asks, this answers.
 *
 * Every request in flight holds one place of `MAX_REQUESTS_IN_FLIGHT` (T) from its admission until its response
 * begins. Once the app knows whose it is, the place is charged to a **party**:
 *
 * - a workspace, as soon as its credential (API key, admin session, MCP token) is verified; the operator's
 *   token is one party of its own;
 * - the client address (as the rate limiter keys it: `TRUST_PROXY` applies, an IPv6 address by its /64) on a
 *   route that takes no credential (inbound webhooks, sign-in, invitations, resets).
 *
 * The workspaces (and the operator) are one **group** each; all unauthenticated addresses together are one
 * group. With n groups holding places (the asker's counted), a group's share is
 *
 *     share(n) = max(1, ⌊T / (n + 1)⌋)
 *
 * ("+ 1": every group leaves room for one more), and a group at its share is refused (`workspace_share`,
 * `unauthenticated_share`). Inside the unauthenticated group, with m addresses holding places (the asker's
 * counted), one address holds at most max(1, ⌊share(n) / (m + 1)⌋) (`address_share`). So in steady state the n
 * groups hold at most n·T/(n+1) places and a group that arrives finds at least ⌊T/(n+1)⌋ free, whatever the
 * others do, as long as fewer than T groups are active at once.
 *
 * The store's queue (`MAX_STORE_QUEUE`, Q) is shared the same way: when Q statements wait for the store, a
 * group is admitted only while it holds fewer than max(1, ⌊Q / (n + 1)⌋) requests (`store_queue`), an
 * address of the unauthenticated group fewer than its part of that. A request waits for one statement at a
 * time, so the requests a group holds bound the statements it queues: a flooding workspace fills the queue
 * with its own requests and is refused, and the others are still admitted.
 *
 * T itself stays a hard bound: a request that arrives with T places held is refused at once (`in_flight`),
 * before anything is known about it. Until its credential is verified a request holds a place of T but of no
 * party (`authenticating`); while the store's queue is at its bound, those requests are one more group of it
 * (a key that is not cached is looked up in the store), refused at once past max(1, ⌊Q / (n + 2)⌋).
 * T = 0 or Q = 0: that bound and its shares are off.
 */

/** Why a request was refused with 503: the bound or the share it met. */
export type AdmissionRefusal = 'in_flight' | 'store_queue' | 'workspace_share' | 'unauthenticated_share' | 'address_share';

export interface AdmissionLimits {
  /** Requests in progress at most (MAX_REQUESTS_IN_FLIGHT); 0: no bound. */
  maxInFlight: number;
  /** Statements waiting for the store at most (MAX_STORE_QUEUE); 0: no bound. */
  maxStoreQueue: number;
}

/** Whose a place is, once known. */
export type Party = { kind: 'workspace'; id: string } | { kind: 'address'; id: string };

/** One admitted request's place. */
export interface Ticket {
  party?: Party;
  released: boolean;
}

/** What `/metrics` and `/readyz` read. */
export interface AdmissionSnapshot {
  /** Places held by requests whose credential is being verified. */
  authenticating: number;
  /** Places held by workspaces (and the operator). */
  workspaces: number;
  /** Places held by unauthenticated addresses. */
  unauthenticated: number;
  /** Workspaces (and the operator) holding at least one place. */
  activeWorkspaces: number;
  /** Workspaces holding their whole share now. */
  workspacesAtShare: number;
  /** Unauthenticated addresses holding their whole share now. */
  addressesAtShare: number;
  /** The hard bound was reached within the last second (or is now): the instance refuses newcomers too. */
  saturated: boolean;
}

/** Credentials remembered for stage one at most (forgotten all at once past it: a guess, never a rule). */
const MAX_HINTS = 10_000;

/** How long a refusal at the hard bound keeps the instance `saturated` for `/readyz`. */
const SATURATION_MEMORY_MS = 1_000;

export class AdmissionShares {
  readonly #limits: AdmissionLimits;
  readonly #storeQueue: () => number;
  #total = 0;
  #authenticating = 0;
  /** Places by workspace group (`ws:<id>`, `operator`). */
  readonly #groups = new Map<string, number>();
  /** Places by unauthenticated address. */
  readonly #addresses = new Map<string, number>();
  #unauthenticated = 0;
  #workspaces = 0;
  #lastHardRefusal = Number.NEGATIVE_INFINITY;
  /** Credential digest → the workspace group it was last verified for (stage one's guess). */
  readonly #hints = new Map<string, string>();

  constructor(limits: AdmissionLimits, storeQueue: () => number) {
    this.#limits = limits;
    this.#storeQueue = storeQueue;
  }

  /**
   * Stage one, before anything else is done for the request: the hard bound; then, when its credential was
   * seen verified before (`hint`, the workspace group {@link remember} noted for it), that workspace's share at
   * once, so a flooding workspace's requests never crowd the requests still being authenticated.
   */
  enter(hint?: string): Ticket | AdmissionRefusal {
    const { maxInFlight } = this.#limits;
    if (maxInFlight > 0 && this.#total >= maxInFlight) {
      this.#lastHardRefusal = performance.now();
      return 'in_flight';
    }
    if (hint !== undefined) {
      const refusal = this.#judgeWorkspace(hint);
      if (refusal) return refusal;
      this.#total += 1;
      const party: Party = { kind: 'workspace', id: hint };
      this.#charge(party);
      return { party, released: false };
    }
    // Requests not charged to a party yet (their credential being verified) are one more group of the store's
    // queue: with the queue full and keys to look up in it, they are refused at once rather than queued.
    if (this.#authenticating >= this.#storeShare(this.#activeGroups() + 1)) return 'store_queue';
    this.#total += 1;
    this.#authenticating += 1;
    return { released: false };
  }

  /** The workspace group a credential (a digest of it) was last verified for, if remembered. */
  hint(credential: string): string | undefined {
    return this.#hints.get(credential);
  }

  /** Remembers the workspace group a credential was verified for (a guess for stage one; stage two still checks). */
  remember(credential: string, group: string): void {
    if (this.#hints.get(credential) === group) return;
    if (this.#hints.size >= MAX_HINTS) this.#hints.clear();
    this.#hints.set(credential, group);
  }

  /**
   * Stage two's judgement of an address, without charging: what {@link claim} would answer for a new request of
   * it now. Stage one asks it on a route without a credential, where the address is the party.
   */
  refusesAddress(address: string): AdmissionRefusal | undefined {
    return this.#judgeAddress(address);
  }

  /** Stage two: charges the ticket to its party, or says which share it met (the ticket stays unclaimed). */
  claim(ticket: Ticket, party: Party): AdmissionRefusal | undefined {
    if (ticket.released) return undefined;
    if (ticket.party) {
      if (ticket.party.kind === party.kind && ticket.party.id === party.id) return undefined;
      // Stage one's guess was wrong (a credential now of another party): judged afresh, as any.
      this.#uncharge(ticket.party);
      ticket.party = undefined;
      this.#authenticating += 1;
    }
    const refusal = party.kind === 'workspace' ? this.#judgeWorkspace(party.id) : this.#judgeAddress(party.id);
    if (refusal) return refusal;
    ticket.party = party;
    this.#authenticating -= 1;
    this.#charge(party);
    return undefined;
  }

  #charge(party: Party): void {
    if (party.kind === 'workspace') {
      this.#groups.set(party.id, (this.#groups.get(party.id) ?? 0) + 1);
      this.#workspaces += 1;
    } else {
      this.#addresses.set(party.id, (this.#addresses.get(party.id) ?? 0) + 1);
      this.#unauthenticated += 1;
    }
  }

  #uncharge(party: Party): void {
    const map = party.kind === 'workspace' ? this.#groups : this.#addresses;
    const held = (map.get(party.id) ?? 1) - 1;
    if (held <= 0) map.delete(party.id);
    else map.set(party.id, held);
    if (party.kind === 'workspace') this.#workspaces -= 1;
    else this.#unauthenticated -= 1;
  }

  /** The response began (or the request ended): its place is free. */
  leave(ticket: Ticket): void {
    if (ticket.released) return;
    ticket.released = true;
    this.#total -= 1;
    const party = ticket.party;
    if (!party) {
      this.#authenticating -= 1;
      return;
    }
    this.#uncharge(party);
  }

  snapshot(): AdmissionSnapshot {
    const n = this.#activeGroups();
    const share = this.#share(n);
    let workspacesAtShare = 0;
    for (const held of this.#groups.values()) if (held >= share) workspacesAtShare += 1;
    const addressShare = this.#addressShare(share, this.#addresses.size);
    let addressesAtShare = 0;
    for (const held of this.#addresses.values()) if (held >= addressShare) addressesAtShare += 1;
    return {
      authenticating: this.#authenticating,
      workspaces: this.#workspaces,
      unauthenticated: this.#unauthenticated,
      activeWorkspaces: this.#groups.size,
      workspacesAtShare,
      addressesAtShare,
      saturated: this.saturated(),
    };
  }

  /** The hard bound is reached now, or refused a request within the last second. */
  saturated(): boolean {
    const { maxInFlight } = this.#limits;
    if (maxInFlight > 0 && this.#total >= maxInFlight) return true;
    return performance.now() - this.#lastHardRefusal < SATURATION_MEMORY_MS;
  }

  #judgeWorkspace(group: string): AdmissionRefusal | undefined {
    const held = this.#groups.get(group) ?? 0;
    const n = this.#activeGroups() + (held === 0 ? 1 : 0);
    if (held >= this.#share(n)) return 'workspace_share';
    if (held >= this.#storeShare(n)) return 'store_queue';
    return undefined;
  }

  #judgeAddress(address: string): AdmissionRefusal | undefined {
    const held = this.#addresses.get(address) ?? 0;
    const n = this.#activeGroups() + (this.#unauthenticated === 0 ? 1 : 0);
    const m = this.#addresses.size + (held === 0 ? 1 : 0);
    const share = this.#share(n);
    if (this.#unauthenticated >= share) return 'unauthenticated_share';
    if (held >= this.#addressShare(share, m)) return 'address_share';
    const storeShare = this.#storeShare(n);
    if (this.#unauthenticated >= storeShare || held >= this.#addressShare(storeShare, m)) return 'store_queue';
    return undefined;
  }

  /** Groups holding places: each workspace, and the unauthenticated addresses as one. */
  #activeGroups(): number {
    return this.#groups.size + (this.#unauthenticated > 0 ? 1 : 0);
  }

  /** A group's share of T with n groups active. */
  #share(n: number): number {
    const { maxInFlight } = this.#limits;
    return maxInFlight > 0 ? Math.max(1, Math.floor(maxInFlight / (n + 1))) : Number.POSITIVE_INFINITY;
  }

  /** A group's share of the store's queue with n groups active, while the queue is at its bound. */
  #storeShare(n: number): number {
    const { maxStoreQueue } = this.#limits;
    if (maxStoreQueue <= 0 || this.#storeQueue() < maxStoreQueue) return Number.POSITIVE_INFINITY;
    return Math.max(1, Math.floor(maxStoreQueue / (n + 1)));
  }

  /** One address's part of the unauthenticated group's share, with m addresses active. */
  #addressShare(groupShare: number, m: number): number {
    return Number.isFinite(groupShare) ? Math.max(1, Math.floor(groupShare / (m + 1))) : groupShare;
  }
}
