import { describe, expect, it } from 'vitest';
import { AGENT_SLUGS } from './catalog.ts';
import { PLANS, PLAN_NAMES, isAgentInPlan, isAliasInPlan, isPlanName } from './plans.ts';

describe('plans', () => {
  it.each([
    ['starter', ['orchestrator', 'sales', 'marketing', 'customer-care'], ['Prelude', 'Sonata', 'Symphony'], 2_000_000],
    ['growth', [...AGENT_SLUGS], ['Prelude', 'Sonata', 'Symphony'], 10_000_000],
    ['enterprise', [...AGENT_SLUGS], ['Prelude', 'Sonata', 'Symphony', 'Concerto'], 50_000_000],
  ] as const)('%s: agents, aliases, quota and rollover cap', (name, agents, aliases, quota) => {
    const plan = PLANS[name];
    expect(plan.name).toBe(name);
    expect([...plan.agents]).toEqual(agents);
    expect([...plan.aliases]).toEqual(aliases);
    expect(plan.quotaStu).toBe(quota);
    expect(plan.rolloverCapStu).toBe(quota);
  });

  it.each([
    ['starter', 'sales', true],
    ['starter', 'customer-care', true],
    ['starter', 'finance', false],
    ['starter', 'legal', false],
    ['growth', 'legal', true],
    ['enterprise', 'it', true],
    ['enterprise', 'unknown', false],
  ] as const)('isAgentInPlan(%s, %s) = %s', (plan, slug, want) => {
    expect(isAgentInPlan(plan, slug)).toBe(want);
  });

  it.each([
    ['starter', 'Concerto', false],
    ['growth', 'Concerto', false],
    ['enterprise', 'Concerto', true],
    ['starter', 'Prelude', true],
    ['growth', 'Symphony', true],
  ] as const)('isAliasInPlan(%s, %s) = %s', (plan, alias, want) => {
    expect(isAliasInPlan(plan, alias)).toBe(want);
  });

  it('knows its plan names', () => {
    expect(PLAN_NAMES).toEqual(['starter', 'growth', 'enterprise']);
    expect(isPlanName('growth')).toBe(true);
    expect(isPlanName('free')).toBe(false);
  });
});
