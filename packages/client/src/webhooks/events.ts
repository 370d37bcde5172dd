/**
 * @module The outbound events a receiver gets: the envelope `{ id, type, created_at, tenant_id,
 * data }` and the `data` of each type, with the contract's snake_case field names.
 */

/** The `data` of each event type. */
export interface WebhookEventData {
  'run.completed': {
    run_id: string;
    agent: string;
    alias: string;
    status: 'completed';
    usage: { input_tokens: number; output_tokens: number; stu: number };
  };
  'run.failed': { run_id: string; agent: string; reason: string; status: 'failed' };
  'approval.created': { approval_id: string; run_id: string; agent: string; action: string; summary: string; expires_at: string };
  'approval.decided': { approval_id: string; decision: 'approved' | 'rejected'; decided_by: string; run_id: string };
  'draft.created': { draft_id: string; run_id: string; agent: string; kind: string; subject: string };
  'integration.connected': { integration: string; provider: string; connected_by: string };
  ping: { destination_id: string; message: string };
}

/** Every event type, `ping` (the test event) included. */
export type WebhookEventType = keyof WebhookEventData;

/** One event as delivered; narrow on `type` to get the typed `data`. */
export type WebhookEvent = {
  [T in WebhookEventType]: { id: string; type: T; created_at: string; tenant_id: string; data: WebhookEventData[T] };
}[WebhookEventType];
