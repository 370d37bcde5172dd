/**
 * @module API key scopes: which strings can be issued, and whether granted scopes cover a needed one.
 */
import { AGENT_SLUGS } from '../../vocabulary/catalog.ts';
import { fail } from '../../errors.ts';

/** Every scope an API key can hold, in the spec's order (the per-agent form is a pattern). */
export const ISSUABLE_SCOPES = ['orchestrator:invoke', 'tenant:read', 'departments:read', 'usage:read', 'webhooks:ingest', 'mcp:tenant'] as const;

const AGENT_SCOPE = /^orchestrator:invoke:agent:([a-z][a-z0-9-]{0,63})$/;
/** `resource:*` wildcards name one of the resources above; `*:*` is reserved and never issued. */
const RESOURCES = new Set(ISSUABLE_SCOPES.map((s) => s.split(':')[0]!));

export function agentScope(slug: string): string {
  return `orchestrator:invoke:agent:${slug}`;
}

/**
 * Checks scopes asked for at key creation; returns them without duplicates.
 * @throws invalid_body naming the first scope that cannot be issued
 */
export function validateScopes(scopes: readonly string[]): string[] {
  if (scopes.length === 0) throw fail('invalid_body', "'scopes' needs at least one scope", { param: 'scopes' });
  scopes.forEach((scope, i) => {
    if (scope === '*:*') throw fail('invalid_body', `'scopes[${i}]': the full wildcard is never issued`, { param: `scopes[${i}]` });
    // The index, not the value: an error never echoes what the caller sent.
    if (!isIssuable(scope)) throw fail('invalid_body', `'scopes[${i}]' is not a scope that can be issued`, { param: `scopes[${i}]` });
  });
  return [...new Set(scopes)];
}

function isIssuable(scope: string): boolean {
  if ((ISSUABLE_SCOPES as readonly string[]).includes(scope)) return true;
  // As the contract says: an agent-bound scope names one of the workspace's agents.
  const agent = AGENT_SCOPE.exec(scope)?.[1];
  if (agent !== undefined) return (AGENT_SLUGS as readonly string[]).includes(agent);
  const [resource, rest, ...more] = scope.split(':');
  return more.length === 0 && rest === '*' && RESOURCES.has(resource ?? '');
}

/**
 * Whether `granted` covers `needed`: the same scope, or the `resource:*` wildcard of its resource.
 * `orchestrator:invoke` covers every `orchestrator:invoke:agent:<slug>`; the reverse is not true.
 */
export function grants(granted: readonly string[], needed: string): boolean {
  const resource = needed.split(':')[0];
  return granted.some((scope) => scope === needed || scope === `${resource}:*` || (scope === 'orchestrator:invoke' && AGENT_SCOPE.test(needed)));
}

/** Whether the key may invoke agent `slug`: all agents, or that one agent. */
export function mayInvokeAgent(granted: readonly string[], slug: string): boolean {
  return grants(granted, agentScope(slug));
}

/**
 * Passes when `granted` covers every scope of at least one alternative (a route's `security` list for one
 * scheme, or an MCP tool's, which are its operation's). With `agentTargeted` (`x-agent-targeted`), a scope
 * bound to one agent (`orchestrator:invoke:agent:<slug>`) stands for `orchestrator:invoke`; the target agent is
 * then checked with `mayInvokeAgent`.
 * @throws scope_required naming the missing scopes, `holder` being what lacks them
 */
export function requireOneOf(
  granted: readonly string[],
  alternatives: readonly (readonly string[])[],
  options: { agentTargeted?: boolean; holder?: string } = {},
): void {
  const covers = (needed: string) =>
    grants(granted, needed) || (options.agentTargeted === true && needed === 'orchestrator:invoke' && granted.some((s) => AGENT_SCOPE.test(s)));
  if (alternatives.some((scopes) => scopes.every(covers))) return;
  const missing = alternatives.map((scopes) => scopes.filter((s) => !covers(s)).join(' and '));
  const named = missing.map((s) => `'${s}'`).join(' or ');
  throw fail('scope_required', `${options.holder ?? 'This credential'} lacks the scope ${named}.`);
}

/** @throws scope_required naming the scope when `granted` does not cover `needed` */
export function requireScope(granted: readonly string[], needed: string): void {
  if (!grants(granted, needed)) throw fail('scope_required', `This API key lacks the scope '${needed}'.`);
}
