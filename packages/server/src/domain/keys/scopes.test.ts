import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { grants, mayInvokeAgent, requireOneOf, requireScope, validateScopes } from './scopes.ts';

describe('scopes', () => {
  it.each([
    ['orchestrator:invoke'],
    ['orchestrator:invoke:agent:sales'],
    ['orchestrator:invoke:agent:customer-care'],
    ['tenant:read'],
    ['departments:read'],
    ['usage:read'],
    ['webhooks:ingest'],
    ['mcp:tenant'],
    ['usage:*'],
    ['orchestrator:*'],
  ])('issues %s', (scope) => {
    expect(validateScopes([scope])).toEqual([scope]);
  });

  it.each([
    ['*:*', "'scopes[0]': the full wildcard is never issued"],
    ['admin:all', "'scopes[0]' is not a scope that can be issued"],
    ['billing:*', "'scopes[0]' is not a scope that can be issued"],
    ['orchestrator:invoke:agent:Bad_Slug', "'scopes[0]' is not a scope that can be issued"],
    ['orchestrator:invoke:agent:nobody', "'scopes[0]' is not a scope that can be issued"],
    ['usage:*:*', "'scopes[0]' is not a scope that can be issued"],
  ])('refuses %s with invalid_body', (scope, message) => {
    const err = catchError(() => validateScopes([scope]));
    expect(err).toMatchObject({ code: 'invalid_body', status: 400, publicMessage: message });
  });

  it('refuses an empty list and removes duplicates', () => {
    expect(catchError(() => validateScopes([]))).toMatchObject({ code: 'invalid_body' });
    expect(validateScopes(['usage:read', 'usage:read'])).toEqual(['usage:read']);
  });

  it('grants by exact scope, by resource wildcard, and all agents by orchestrator:invoke', () => {
    expect(grants(['usage:read'], 'usage:read')).toBe(true);
    expect(grants(['usage:*'], 'usage:read')).toBe(true);
    expect(grants(['usage:*'], 'tenant:read')).toBe(false);
    expect(grants(['tenant:read'], 'usage:read')).toBe(false);
    expect(mayInvokeAgent(['orchestrator:invoke'], 'sales')).toBe(true);
    expect(mayInvokeAgent(['orchestrator:invoke:agent:sales'], 'sales')).toBe(true);
    expect(mayInvokeAgent(['orchestrator:invoke:agent:sales'], 'legal')).toBe(false);
    // An agent-restricted key does not get the general scope.
    expect(grants(['orchestrator:invoke:agent:sales'], 'orchestrator:invoke')).toBe(false);
  });

  it('names the missing scope in scope_required', () => {
    const err = catchError(() => requireScope(['tenant:read'], 'usage:read'));
    expect(err).toMatchObject({ code: 'scope_required', status: 403 });
    expect(err.publicMessage).toContain('usage:read');
  });

  it('requireOneOf: any one alternative, an agent-bound scope only where the operation is agent-targeted, every missing one named', () => {
    const getRun = [['orchestrator:invoke'], ['tenant:read']];
    expect(() => requireOneOf(['tenant:read'], getRun)).not.toThrow();
    expect(() => requireOneOf(['orchestrator:*'], getRun)).not.toThrow();
    const agentBound = catchError(() => requireOneOf(['orchestrator:invoke:agent:sales'], getRun));
    expect(agentBound.publicMessage).toBe("This credential lacks the scope 'orchestrator:invoke' or 'tenant:read'.");
    expect(() => requireOneOf(['orchestrator:invoke:agent:sales'], [['orchestrator:invoke']], { agentTargeted: true })).not.toThrow();
    const holder = catchError(() => requireOneOf(['mcp:tenant'], [['usage:read']], { holder: 'The API key that issued this MCP token' }));
    expect(holder).toMatchObject({ code: 'scope_required', publicMessage: "The API key that issued this MCP token lacks the scope 'usage:read'." });
  });
});

function catchError(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a ServiceError');
}
