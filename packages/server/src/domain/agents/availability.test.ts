import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { activeAgents, assertAgentAvailable, routingCandidates } from './availability.ts';

const paused = new Map([['marketing', 'Paused by an admin']]);

describe('agent availability', () => {
  it('lists the plan minus paused agents, in catalog order, with their alias', () => {
    expect(activeAgents({ plan: 'starter', paused }).map((a) => [a.slug, a.defaultAlias])).toEqual([
      ['orchestrator', 'Prelude'],
      ['sales', 'Sonata'],
      ['customer-care', 'Prelude'],
    ]);
    expect(activeAgents({ plan: 'growth' })).toHaveLength(11);
  });

  it('gives the router departments only', () => {
    expect(routingCandidates({ plan: 'starter', paused })).toEqual(['sales', 'customer-care']);
    expect(routingCandidates({ plan: 'enterprise' })).toHaveLength(10);
  });

  it.each([
    ['sales', 'starter', undefined],
    ['orchestrator', 'growth', undefined],
    ['nope', 'enterprise', { error: 'agent_unknown', status: 403, extras: { agentSlug: 'nope' } }],
    ['finance', 'starter', { error: 'agent_not_in_plan', status: 403, extras: { agentSlug: 'finance' } }],
    ['marketing', 'starter', { error: 'agent_disabled', status: 403, extras: { agentSlug: 'marketing', reason: 'Paused by an admin' } }],
  ] as const)('%s on %s', (slug, plan, want) => {
    let caught: unknown;
    let agent: ReturnType<typeof assertAgentAvailable> | undefined;
    try {
      agent = assertAgentAvailable(slug, { plan, paused });
    } catch (error) {
      caught = error;
    }
    if (!want) {
      expect(caught).toBeUndefined();
      expect(agent?.slug).toBe(slug);
      return;
    }
    expect(caught).toBeInstanceOf(ServiceError);
    const error = caught as ServiceError;
    expect({ error: error.code, status: error.status, extras: error.extras }).toEqual(want);
  });
});
