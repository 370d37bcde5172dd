/**
 * @module The inbound ingestion service the inbound route receives: the idempotent insert of one
 * verified, rendered event (ingest.ts), stamped with the app's clock.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { type InboundEventRecord, ingestInboundEvent } from './ingest.ts';

export type InboundIngestService = ReturnType<typeof createInboundIngestService>;

export function createInboundIngestService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** Inserts the event once: `ok` the first time (its run queued), `duplicate` after. */
    ingest: (record: Omit<InboundEventRecord, 'receivedAt'>) => ingestInboundEvent(db, { ...record, receivedAt: clock.now() }),
  };
}
