/**
 * @module The public entry of `@service/client`: the typed client of the Agent Invocation
 * Service and the receiver-side helpers of its signed webhook deliveries.
 */

// Receiver side of outbound webhooks: verify a delivery, typed events.
export * from './webhooks/index.ts';
