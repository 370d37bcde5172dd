/**
 * @module Workspace events: the outbox that turns `run.completed`, `run.failed`,
 * `approval.created`, `approval.decided`, `draft.created` and `integration.connected` into
 * signed deliveries to subscribed destinations.
 */
export {
  deliveryIds,
  enqueueEvent,
  enqueuePrepared,
  enqueueTestEvent,
  prepareEvent,
  type PreparedEvent,
  type EnqueueEventInput,
  type EnqueueOptions,
  type EnqueuedEvent,
} from './outbox.ts';
export type { OutboundEventData, WorkspaceEventType } from '../webhooks/envelope.ts';
