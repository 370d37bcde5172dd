/**
 * @module The outbound events a receiver gets: the envelope `{ id, type, created_at, tenant_id,
 * data }` and the `data` of each type, with the contract's snake_case field names.
 */
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];

/** The `data` of each event type, as the contract (`openapi/components/schemas/*Data.yaml`) defines it. */
export interface WebhookEventData {
  'run.completed': Schemas['RunCompletedData'];
  'run.failed': Schemas['RunFailedData'];
  'approval.created': Schemas['ApprovalCreatedData'];
  'approval.decided': Schemas['ApprovalDecidedData'];
  'draft.created': Schemas['DraftCreatedData'];
  'integration.connected': Schemas['IntegrationConnectedData'];
  ping: Schemas['PingData'];
}

/** Every event type, `ping` (the test event) included. */
export type WebhookEventType = keyof WebhookEventData;

/** One event as delivered; narrow on `type` to get the typed `data`. */
export type WebhookEvent = {
  [T in WebhookEventType]: {
    id: string;
    type: T;
    created_at: string;
    tenant_id: string;
    data: WebhookEventData[T];
    /** Only on a test event an admin sent (ping, test events): `data` is a sample, not workspace activity. */
    test?: true;
  };
}[WebhookEventType];
