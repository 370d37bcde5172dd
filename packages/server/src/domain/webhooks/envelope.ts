/**
 * @module The outbound event envelope `{ id, type, created_at, tenant_id, data }` for the six
 * workspace event types and the `ping` test event, and its serialization to the exact bytes that
 * are signed and sent (stored once, so every retry carries the same body).
 */
import { systemClock } from '../../clock.ts';
import { randomBase62 } from '../../random.ts';
import type { components } from '../../../../../generated/types.ts';

type Schemas = components['schemas'];

/** The workspace event types of the spec. */
export const WORKSPACE_EVENT_TYPES = ['run.completed', 'run.failed', 'approval.created', 'approval.decided', 'draft.created', 'integration.connected'] as const;
export type WorkspaceEventType = (typeof WORKSPACE_EVENT_TYPES)[number];
/** Every type a destination can receive: the workspace events plus the `ping` test event. */
export type OutboundEventType = WorkspaceEventType | 'ping';

/** `data` of each event type, as the contract defines it (the `ping` payload is our decision there). */
export interface OutboundEventData {
  'run.completed': Schemas['RunCompletedData'];
  'run.failed': Schemas['RunFailedData'];
  'approval.created': Schemas['ApprovalCreatedData'];
  'approval.decided': Schemas['ApprovalDecidedData'];
  'draft.created': Schemas['DraftCreatedData'];
  'integration.connected': Schemas['IntegrationConnectedData'];
  ping: Schemas['PingData'];
}

/** The envelope of one outbound event. */
export interface OutboundEnvelope<T extends OutboundEventType = OutboundEventType> {
  id: string;
  type: T;
  created_at: string;
  tenant_id: string;
  data: OutboundEventData[T];
  /** Only on a test event an admin sent (ping, test-events): its data is a sample, not workspace activity. */
  test?: true;
}

/**
 * The fields that may carry text written by an agent, per type. They pass through the redactor
 * before the envelope exists, so no stored or sent body ever holds unredacted agent text.
 */
const AGENT_TEXT_FIELDS: { readonly [T in OutboundEventType]: readonly (keyof OutboundEventData[T])[] } = {
  'run.completed': [],
  'run.failed': ['reason'],
  'approval.created': ['summary'],
  'approval.decided': [],
  'draft.created': ['subject'],
  'integration.connected': [],
  ping: [],
};

interface BuildEnvelopeInput<T extends OutboundEventType> {
  type: T;
  /** The workspace, `wksp_<id>`. */
  tenantId: string;
  data: OutboundEventData[T];
  /** The redactor of agent text (the service's redaction rules); applied to {@link AGENT_TEXT_FIELDS}. */
  redactText: (text: string) => string;
  /** When the event occurred (the outbox passes the application clock's); the system clock's now by default. */
  createdAt?: Date;
  /** An existing `evt_` id (replay keeps the id); a fresh one by default. */
  id?: string;
  /** A test event (`"test": true` in the envelope). */
  test?: boolean;
}

/** The text of the `ping` event's message. */
export const PING_MESSAGE = 'Test event sent from the service. It is not workspace activity.';

const TENANT_ID = /^wksp_[0-9A-Za-z]{16,32}$/;
const EVENT_ID = /^evt_[0-9A-Za-z]{16,32}$/;

/** Build one envelope. Throws a plain Error on a malformed tenant or event id (a programming error). */
export function buildEnvelope<T extends OutboundEventType>(input: BuildEnvelopeInput<T>): OutboundEnvelope<T> {
  if (!TENANT_ID.test(input.tenantId)) throw new Error('tenantId must be a wksp_ identifier');
  const id = input.id ?? newEventId();
  if (!EVENT_ID.test(id)) throw new Error('id must be an evt_ identifier');
  const data = { ...input.data } as Record<string, unknown>;
  for (const field of AGENT_TEXT_FIELDS[input.type] as readonly string[]) {
    if (typeof data[field] === 'string') data[field] = input.redactText(data[field]);
  }
  return {
    id,
    type: input.type,
    created_at: (input.createdAt ?? systemClock.now()).toISOString(),
    tenant_id: input.tenantId,
    data: data as OutboundEventData[T],
    ...(input.test ? { test: true as const } : {}),
  };
}

/** The ping envelope for one destination (`dst_<id>`). */
export function buildPingEnvelope(input: { tenantId: string; destinationId: string; createdAt?: Date; id?: string }): OutboundEnvelope<'ping'> {
  return buildEnvelope({
    type: 'ping',
    tenantId: input.tenantId,
    data: { destination_id: input.destinationId, message: PING_MESSAGE },
    redactText: (text) => text,
    test: true,
    ...(input.createdAt ? { createdAt: input.createdAt } : {}),
    ...(input.id ? { id: input.id } : {}),
  });
}

/** The exact body bytes of an envelope (compact UTF-8 JSON): sign these and send these. */
export function serializeEnvelope(envelope: OutboundEnvelope): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(envelope));
}

/** A fresh event id: `evt_` + 24 base62 characters from the CSPRNG (about 143 bits). */
export function newEventId(): string {
  return `evt_${randomBase62(24)}`;
}
