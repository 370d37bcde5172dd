/**
 * @module The contract's words the panel offers as choices (filters, selects, checkboxes), in one place. Each list
 * holds its enum's values in the order a screen shows them; `test/vocabulary.test.ts` compares them with
 * generated/openapi.json, so a word added to the contract and not here fails the suite instead of going missing from
 * a screen.
 */
import type { components } from '../../../generated/types.ts';

// The schemas straight from the generated types (not through api.ts, a browser module): the suite reads this file too.
type Schemas = components['schemas'];

/** The catalog's agents, orchestrator first (the contract's `AgentSlug` names them in its description). */
export const AGENT_SLUGS = ['orchestrator', 'sales', 'marketing', 'finance', 'legal', 'hr', 'operations', 'analytics', 'strategy', 'it', 'customer-care'];
export const ALIASES: Schemas['ModelAlias'][] = ['Prelude', 'Sonata', 'Symphony', 'Concerto'];
export const ROLES: Schemas['WorkspaceRole'][] = ['owner', 'admin', 'member'];
export const RUN_STATUSES: Schemas['RunStatus'][] = ['in_progress', 'completed', 'failed', 'canceled'];
export const RUN_SOURCES: Schemas['Run']['source'][] = ['api', 'panel', 'inbound_webhook', 'mcp'];
/** What a destination may subscribe to. */
export const OUTBOUND_EVENT_TYPES: Schemas['WebhookDestination']['events'] = [
  'run.completed',
  'run.failed',
  'approval.created',
  'approval.decided',
  'draft.created',
  'integration.connected',
];
/** What a test event may be (`SendTestEventRequest.type`). */
export const TEST_EVENT_TYPES: Schemas['SendTestEventRequest']['type'][] = [
  'ping',
  'run.completed',
  'run.failed',
  'approval.created',
  'approval.decided',
  'draft.created',
  'integration.connected',
];

/** What the audit log records (`AuditAction`). */
export const AUDIT_ACTIONS: Schemas['AuditAction'][] = [
  'key.created',
  'key.rotated',
  'key.revoked',
  'mcp_token.created',
  'destination.created',
  'destination.secret_rotated',
  'destination.paused',
  'destination.resumed',
  'destination.pinged',
  'destination.test_sent',
  'destination.replayed',
  'inbound_webhook.created',
  'inbound_webhook.paused',
  'inbound_webhook.resumed',
  'inbound_webhook.revoked',
  'approval.decided',
  'integration.connected',
  'integration.tested',
  'integration.paused',
  'integration.resumed',
  'integration.removed',
  'agent.paused',
  'agent.resumed',
  'agent.configured',
  'kill_switch.engaged',
  'kill_switch.released',
  'member.invited',
  'member.joined_by_sso',
  'member.added',
  'invitation.resent',
  'invitation.revoked',
  'invitation.accepted',
  'member.role_changed',
  'member.removed',
  'member.reset',
  'account_reset.redeemed',
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  'sso.configured',
  'sso.updated',
  'sso.removed',
  'workspace.created',
  'workspace.updated',
];
