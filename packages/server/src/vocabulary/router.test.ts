import { describe, expect, it } from 'vitest';
import { DEPARTMENT_SLUGS, type DepartmentSlug } from './catalog.ts';
import { PLANS } from './plans.ts';
import { routeRequest, words } from './router.ts';

const user = (content: string) => ({ role: 'user', content });

describe('routeRequest', () => {
  it.each([
    ['Can you qualify this lead and move it along the pipeline?', 'sales'],
    ['Prepare a quotation for 40 seats with a volume discount', 'sales'],
    ['Plan a newsletter campaign for the spring launch', 'marketing'],
    ['Write social media copy for our landing page', 'marketing'],
    ['Three invoices are overdue, what does that do to our cash flow?', 'finance'],
    ['What is the VAT on this expense?', 'finance'],
    ['Review the NDA clause on liability', 'legal'],
    ['Are we GDPR compliant with this privacy policy?', 'legal'],
    ['We are hiring: write a job description and plan the interviews', 'hr'],
    ['How many vacation days does a new employee get?', 'hr'],
    ['Our supplier is late and the warehouse inventory is low', 'operations'],
    ['Track the shipment of purchase order 1182', 'operations'],
    ['Build a dashboard of the weekly KPIs', 'analytics'],
    ['What is the churn by cohort in the dataset?', 'analytics'],
    ['Run a SWOT of our main competitor before market entry', 'strategy'],
    ['Draft a long-term roadmap and our positioning', 'strategy'],
    ['I forgot my password and the VPN rejects my login', 'it'],
    ['The printer on floor 2 is broken and my laptop crashed', 'it'],
    ['A customer sent an angry complaint about a late refund', 'customer-care'],
    ['Answer this support ticket about the warranty', 'customer-care'],
    ['Énvoyez la FACTURE: invoice for Müller GmbH', 'finance'],
  ] as const)('%s → %s', (text, want) => {
    const decision = routeRequest([user(text)]);
    expect(decision.agentSlug).toBe(want);
    expect(decision.fallback).toBe(false);
    expect(decision.score).toBeGreaterThan(0);
    expect(decision.matchedTerms.length).toBeGreaterThan(0);
    expect(decision.rationale).toMatch(/^Routed to [A-Z][A-Za-z ]+: the request mentions "/);
  });

  it('falls back to customer care when nothing matches, saying so', () => {
    const decision = routeRequest([user('Hello there, how are you today?')]);
    expect(decision).toEqual({
      agentSlug: 'customer-care',
      rationale: 'No department matched the request; routed to Customer care, the default.',
      matchedTerms: [],
      score: 0,
      fallback: true,
    });
  });

  it('uses earlier user turns when the latest one is vague', () => {
    const decision = routeRequest([
      user('We need to chase the overdue invoices from March'),
      { role: 'assistant', content: 'Sure, which customer?' },
      user('All of them please'),
    ]);
    expect(decision.agentSlug).toBe('finance');
    expect(decision.rationale).toBe(`Routed to Finance from the conversation's earlier turns: the request mentions "invoice".`);
  });

  it('lets the latest turn win over earlier turns', () => {
    const decision = routeRequest([user('Check the invoice'), user('Actually, reset my VPN password')]);
    expect(decision.agentSlug).toBe('it');
  });

  it('ignores assistant and system text', () => {
    const decision = routeRequest([{ role: 'system', content: 'You are the legal contract team' }, user('hello')]);
    expect(decision.fallback).toBe(true);
  });

  it('routes only among the candidates (the plan), with its fallback', () => {
    const starter = PLANS.starter.agents.filter((s): s is DepartmentSlug => s !== 'orchestrator');
    expect(routeRequest([user('Review the NDA clause')], { candidates: starter }).agentSlug).toBe('customer-care');
    expect(routeRequest([user('Review the NDA clause and send a quote')], { candidates: starter }).agentSlug).toBe('sales');
    expect(routeRequest([user('hello')], { candidates: ['finance', 'legal'] }).agentSlug).toBe('finance');
    expect(routeRequest([user('hello')], { candidates: ['finance', 'legal'], fallback: 'legal' }).agentSlug).toBe('legal');
    expect(() => routeRequest([user('hello')], { candidates: [] })).toThrow();
  });

  it('routes a text scored before (kept) as it routed it fresh, whatever the candidates of each call', () => {
    const text = `Review the NDA clause and send a quote (${Math.random()})`;
    const starter = PLANS.starter.agents.filter((s): s is DepartmentSlug => s !== 'orchestrator');
    const fresh = routeRequest([user(text)], { candidates: starter });
    expect(fresh.agentSlug).toBe('sales');
    expect(routeRequest([user(text)], { candidates: starter })).toEqual(fresh);
    expect(routeRequest([user(text)]).agentSlug).toBe('legal');
    expect(routeRequest([user(text)], { candidates: ['finance'] })).toMatchObject({ agentSlug: 'finance', fallback: true });
    expect(routeRequest([user(text)], { candidates: starter })).toEqual(fresh);
  });

  it('breaks ties by catalog order and counts a repeated term once', () => {
    // "budget" (finance, 3) against "contract" (legal, 3): equal scores, finance is listed first.
    expect(routeRequest([user('budget contract')]).agentSlug).toBe('finance');
    expect(routeRequest([user('contract contract contract budget')]).agentSlug).toBe('finance');
  });

  it('is deterministic and quotes only its own vocabulary', () => {
    const text = 'Secret project ZEBRA-42: please review the contract for acme-corp';
    const a = routeRequest([user(text)]);
    const b = routeRequest([user(text)]);
    expect(a).toEqual(b);
    expect(a.agentSlug).toBe('legal');
    expect(a.rationale).not.toMatch(/zebra|acme|secret/i);
  });

  it('has a vocabulary for every department, by its own name', () => {
    // "it" alone is an English pronoun, so IT is reached by "IT support", never by the bare word.
    const names: Record<DepartmentSlug, string> = {
      sales: 'sales',
      marketing: 'marketing',
      finance: 'finance',
      legal: 'legal',
      hr: 'HR',
      operations: 'operations',
      analytics: 'analytics',
      strategy: 'strategy',
      it: 'IT support',
      'customer-care': 'customer care',
    };
    for (const slug of DEPARTMENT_SLUGS) expect(routeRequest([user(names[slug])]).agentSlug).toBe(slug);
    expect(routeRequest([user('can you do it?')]).fallback).toBe(true);
  });
});

describe('words', () => {
  it.each([
    ['Follow-up on the A/B test!', ['follow-up', 'on', 'the', 'a/b', 'test']],
    ['Crème brûlée', ['creme', 'brulee']],
    ['', []],
  ] as const)('%j', (text, want) => {
    expect(words(text)).toEqual(want);
  });
});
