/**
 * @module The integration service handlers receive: recording a connected integration (index.ts, which
 * emits `integration.connected` in the same transaction).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { recordIntegration } from './index.ts';
import type { AuditContext } from '../audit/index.ts';

export type IntegrationService = ReturnType<typeof createIntegrationService>;

export function createIntegrationService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    record: (input: Parameters<typeof recordIntegration>[2], audit?: AuditContext) => recordIntegration(db, clock, input, audit),
  };
}
