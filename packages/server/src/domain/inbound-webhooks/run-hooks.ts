/**
 * @module Inbound ingestion's part of a run's life: the rendered input of an inbound run is
 * forgotten once the run ends (the audit keeps the body's hash and size), and an interrupted inbound
 * run goes back in the hand-over queue while its input is kept. Registered with the run service's
 * hooks (domain/runs/run-hooks.ts) when the inbound webhook service is built.
 */
import type { Tx } from '../../store/db.ts';
import { onRunEnded, onRunInterrupted, type EndedRun } from '../runs/run-hooks.ts';
import { forgetInboundInput, requeueInboundRun } from './run-queue.ts';

async function forgetOnEnd(tx: Tx, run: EndedRun): Promise<void> {
  if (run.source === 'inbound_webhook') await forgetInboundInput(tx, run.runId);
}

async function requeueOnInterrupt(tx: Tx, run: EndedRun): Promise<boolean> {
  return run.source === 'inbound_webhook' && requeueInboundRun(tx, { runId: run.runId, workspaceId: run.workspaceId });
}

/** Registers both hooks (once per process: registering again is a no-op). */
export function registerInboundRunHooks(): void {
  onRunEnded(forgetOnEnd, ['inbound_webhook']);
  onRunInterrupted(requeueOnInterrupt);
}
