import { describe, expect, it } from 'vitest';
import { ALIASES, isAlias } from './alias.ts';
import { AGENT_CATALOG, AGENT_SLUGS, DEPARTMENT_SLUGS, getAgent, isAgentSlug, isDepartmentSlug } from './catalog.ts';

describe('agent catalog', () => {
  it('has the orchestrator and the ten departments with the decided slugs', () => {
    expect(AGENT_CATALOG.map((a) => a.slug)).toEqual([
      'orchestrator',
      'sales',
      'marketing',
      'finance',
      'legal',
      'hr',
      'operations',
      'analytics',
      'strategy',
      'it',
      'customer-care',
    ]);
    expect(DEPARTMENT_SLUGS).toHaveLength(10);
    expect(AGENT_SLUGS).toHaveLength(11);
  });

  it.each(AGENT_CATALOG.map((a) => [a.slug, a] as const))('%s has a valid slug, a name, one line and a plan-wide alias', (_slug, agent) => {
    expect(agent.slug).toMatch(/^[a-z][a-z0-9-]{0,63}$/);
    expect(agent.name.length).toBeGreaterThan(1);
    expect(agent.description).not.toContain('\n');
    expect(agent.description.length).toBeGreaterThan(10);
    expect(agent.kind).toBe(agent.slug === 'orchestrator' ? 'orchestrator' : 'department');
    // Concerto is enterprise-only, so no agent may default to it.
    expect(['Prelude', 'Sonata', 'Symphony']).toContain(agent.defaultAlias);
  });

  it.each([
    ['sales', true, true],
    ['customer-care', true, true],
    ['orchestrator', true, false],
    ['Sales', false, false],
    ['support', false, false],
    ['', false, false],
  ] as const)('isAgentSlug(%j) = %s, isDepartmentSlug = %s', (value, agent, department) => {
    expect(isAgentSlug(value)).toBe(agent);
    expect(isDepartmentSlug(value)).toBe(department);
    expect(getAgent(value)?.slug).toBe(agent ? value : undefined);
  });

  it.each([
    ['Prelude', true],
    ['Sonata', true],
    ['Symphony', true],
    ['Concerto', true],
    ['prelude', false],
    ['gpt', false],
    [42, false],
  ] as const)('isAlias(%j) = %s', (value, want) => {
    expect(isAlias(value)).toBe(want);
  });

  it('lists the aliases in growing capacity order', () => {
    expect(ALIASES).toEqual(['Prelude', 'Sonata', 'Symphony', 'Concerto']);
  });
});
