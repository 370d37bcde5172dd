/**
 * @module The connections outbound deliveries reuse. An attempt connects to the address the SSRF
 * guard checked and pinned (ssrf-guard.ts), so a kept-alive connection may serve a later attempt only
 * if that attempt would have opened the very same connection: one agent per destination host name,
 * port, pinned address and trust roots, and never one agent across two of those. An attempt whose
 * name now resolves elsewhere gets another agent. Idle connections close after `IDLE_MS` (before a
 * receiver's usual keep-alive timeout of 5 s, so that we, not it, close them); past `MAX_AGENTS`
 * destinations the least recently used agent is closed. The TLS trust roots of an attempt are one
 * secure context per distinct value (a context per connection would re-read them every time).
 *
 * The delivery worker holds one pool (`createDeliveryAgents`) for all its attempts.
 */
import { Agent } from 'node:https';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';

/** Idle time after which a kept-alive connection is closed. */
export const IDLE_MS = 2_000;
/**
 * Kept idle connections to one destination address. How many attempts reach an address at once is the
 * worker's lanes' bound (per destination, per workspace: worker/deliveries.ts), not the agent's: an agent
 * serves every workspace sending to that address, and a bound of its own would let one workspace's hanging
 * attempts hold another's waiting behind them.
 */
const MAX_FREE_SOCKETS = 64;
/** Agents kept (one per destination address); beyond, the least recently used is closed. */
const MAX_AGENTS = 256;
/** Secure contexts kept (one per set of extra trust roots: tests and private receivers; few). */
const MAX_CONTEXTS = 16;

export interface AgentKey {
  hostname: string;
  port: number;
  /** The address the guard pinned; every connection of the agent goes there. */
  address: string;
  ca?: SecureContextOptions['ca'] | undefined;
}

export interface DeliveryAgents {
  /** The agent that keeps the connections of exactly this destination address (`lookup` answers the pinned one). */
  agentFor(key: AgentKey, lookup: unknown): Agent;
  /** The secure context of these extra trust roots. */
  secureContextOf(ca: NonNullable<SecureContextOptions['ca']>): SecureContext;
}

export function createDeliveryAgents(): DeliveryAgents {
  const agents = new Map<string, Agent>();
  const contexts = new Map<string, SecureContext>();

  function secureContextOf(ca: NonNullable<SecureContextOptions['ca']>): SecureContext {
    const key = JSON.stringify(ca);
    let context = contexts.get(key);
    if (!context) {
      context = createSecureContext({ ca });
      if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value!);
      contexts.set(key, context);
    }
    return context;
  }

  return {
    secureContextOf,
    agentFor(key, lookup) {
      const name = JSON.stringify([key.hostname, key.port, key.address, key.ca ?? null]);
      let agent = agents.get(name);
      if (agent) {
        agents.delete(name); // set again below: the map's first entry is the least recently used
      } else {
        agent = new Agent({
          keepAlive: true,
          timeout: IDLE_MS,
          maxFreeSockets: MAX_FREE_SOCKETS,
          scheduling: 'lifo',
          // Every connection of this agent goes to the pinned address, whatever DNS says now.
          lookup: lookup as never,
          ...(key.ca ? { secureContext: secureContextOf(key.ca) } : {}),
        });
        if (agents.size >= MAX_AGENTS) {
          const [oldest, evicted] = agents.entries().next().value!;
          agents.delete(oldest);
          evicted.destroy();
        }
      }
      agents.set(name, agent);
      return agent;
    },
  };
}
