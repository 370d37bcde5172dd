/**
 * @module Receiver-side webhook helpers: verification of signed deliveries and the event types.
 */
export {
  verifyWebhook,
  WEBHOOK_TOLERANCE_FUTURE_SECONDS,
  WEBHOOK_TOLERANCE_PAST_SECONDS,
  type SeenEventHook,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
  type WebhookHeaders,
  type WebhookVerificationFailure,
} from './verify-webhook.ts';
export type { WebhookEvent, WebhookEventData, WebhookEventType } from './events.ts';
