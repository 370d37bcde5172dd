/**
 * @module listAuditEvents (GET /audit-events, an owner or admin): the session's workspace's audit log, newest
 * first, with the filters of the contract. The events are recorded by the services, in the changes' transactions.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const listAuditEvents: Handler<'listAuditEvents'> = async (c, { query }, { audit }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const page = await audit.list(workspaceId, {
    action: query.action,
    actor: query.actor,
    target: query.target,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
    limit: query.limit ?? 50,
    offset: query.offset ?? 0,
  });
  // The workspace's own destination URLs (loopback receivers included) are shown back as configured.
  keepUnredacted(c, ...page.data.flatMap((event) => (event.target.type === 'destination' && event.target.label ? [event.target.label] : [])));
  return { status: 200, body: page };
};

export const auditEventHandlers = { listAuditEvents } satisfies Partial<Handlers>;
