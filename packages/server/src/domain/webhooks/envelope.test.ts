import { describe, expect, it } from 'vitest';
import {
  buildEnvelope,
  buildPingEnvelope,
  newEventId,
  PING_MESSAGE,
  serializeEnvelope,
  WORKSPACE_EVENT_TYPES,
  type OutboundEventData,
  type WorkspaceEventType,
} from './envelope.ts';

const TENANT = 'wksp_0123456789abcdefGHIJ';
const AT = new Date('2026-11-22T06:00:00.000Z');
const redact = (text: string) => text.replace(/\b[\w.]+@[\w.]+\b/g, '[redacted]');

const DATA: { [T in WorkspaceEventType]: OutboundEventData[T] } = {
  'run.completed': {
    run_id: 'run_0123456789abcdef',
    agent: 'sales',
    alias: 'Sonata',
    status: 'completed',
    usage: { input_tokens: 12, output_tokens: 34, stu: 56 },
  },
  'run.failed': { run_id: 'run_0123456789abcdef', agent: 'finance', reason: 'kill_switch:hour', status: 'failed' },
  'approval.created': {
    approval_id: 'apr_0123456789abcdef',
    run_id: 'run_0123456789abcdef',
    agent: 'marketing',
    action: 'email.send',
    summary: 'Send the offer to ada@example.com',
    expires_at: '2026-11-23T06:00:00.000Z',
  },
  'approval.decided': {
    approval_id: 'apr_0123456789abcdef',
    decision: 'approved',
    decided_by: 'usr_0123456789abcdef',
    run_id: 'run_0123456789abcdef',
  },
  'draft.created': {
    draft_id: 'drf_0123456789abcdef',
    run_id: 'run_0123456789abcdef',
    agent: 'legal',
    kind: 'email',
    subject: 'Re: contract for bob@example.com',
  },
  'integration.connected': { integration: 'mail', provider: 'imap', connected_by: 'usr_0123456789abcdef' },
};

describe('buildEnvelope', () => {
  it.each(WORKSPACE_EVENT_TYPES.map((type) => [type] as const))('builds %s with the spec fields', (type) => {
    const envelope = buildEnvelope({ type, tenantId: TENANT, data: DATA[type], createdAt: AT, redactText: redact });
    expect(Object.keys(envelope)).toEqual(['id', 'type', 'created_at', 'tenant_id', 'data']);
    expect(envelope.id).toMatch(/^evt_[0-9A-Za-z]{16,32}$/);
    expect(envelope.type).toBe(type);
    expect(envelope.created_at).toBe('2026-11-22T06:00:00.000Z');
    expect(envelope.tenant_id).toBe(TENANT);
    expect(Object.keys(envelope.data)).toEqual(Object.keys(DATA[type]));
  });

  it('redacts agent text (summary, subject, reason) and nothing else', () => {
    const approval = buildEnvelope({ type: 'approval.created', tenantId: TENANT, data: DATA['approval.created'], redactText: redact });
    expect(approval.data.summary).toBe('Send the offer to [redacted]');
    expect(approval.data.action).toBe('email.send');
    const draft = buildEnvelope({ type: 'draft.created', tenantId: TENANT, data: DATA['draft.created'], redactText: redact });
    expect(draft.data.subject).toBe('Re: contract for [redacted]');
    const failed = buildEnvelope({ type: 'run.failed', tenantId: TENANT, data: DATA['run.failed'], redactText: () => 'R' });
    expect(failed.data.reason).toBe('R');
    const decided = buildEnvelope({ type: 'approval.decided', tenantId: TENANT, data: DATA['approval.decided'], redactText: () => 'R' });
    expect(decided.data).toEqual(DATA['approval.decided']);
    expect(DATA['approval.created'].summary).toBe('Send the offer to ada@example.com'); // input untouched
  });

  it('keeps a given event id (replay) and refuses malformed ids', () => {
    const id = 'evt_ABCDEFGHIJKLMNOP';
    expect(buildEnvelope({ type: 'run.failed', tenantId: TENANT, data: DATA['run.failed'], id, redactText: redact }).id).toBe(id);
    expect(() => buildEnvelope({ type: 'run.failed', tenantId: TENANT, data: DATA['run.failed'], id: 'run_ABCDEFGHIJKLMNOP', redactText: redact })).toThrow();
    expect(() => buildEnvelope({ type: 'run.failed', tenantId: 'tenant-1', data: DATA['run.failed'], redactText: redact })).toThrow();
  });
});

describe('buildPingEnvelope', () => {
  it('names the destination and says it is a test', () => {
    const ping = buildPingEnvelope({ tenantId: TENANT, destinationId: 'dst_0123456789abcdef', createdAt: AT });
    expect(ping).toMatchObject({
      type: 'ping',
      created_at: AT.toISOString(),
      tenant_id: TENANT,
      data: { destination_id: 'dst_0123456789abcdef', message: PING_MESSAGE },
    });
  });
});

describe('serializeEnvelope / newEventId', () => {
  it('serializes to compact UTF-8 JSON that parses back to the envelope', () => {
    const envelope = buildEnvelope({
      type: 'draft.created',
      tenantId: TENANT,
      data: { ...DATA['draft.created'], subject: 'Café ☕' },
      createdAt: AT,
      redactText: (t) => t,
    });
    const bytes = serializeEnvelope(envelope);
    const text = new TextDecoder().decode(bytes);
    expect(text).toBe(JSON.stringify(envelope));
    expect(text).not.toContain('\n');
    expect(JSON.parse(text)).toEqual(envelope);
    expect(bytes.byteLength).toBeGreaterThan(text.length); // multi-byte characters kept as UTF-8
  });

  it('makes distinct evt_ ids of 24 base62 characters', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newEventId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
  });
});
