/**
 * @module The stateful phase, part one: sequences built from the contract's OpenAPI `links`. A valid request
 * to a source operation; when it succeeds, each link's target is called with the linked values (checked by
 * `ensure_resource_availability`); after a successful DELETE, the freed resource is probed (`use_after_free`).
 */
import type { Case } from '../case.ts';
import type { Step } from '../checks/index.ts';
import type { Link, Operation } from '../contract/operations.ts';
import type { Session } from '../runner.ts';
import { bagOf, positiveCases } from './generate.ts';
import { evaluate } from './link-expressions.ts';

const RUNS_PER_SOURCE = 3;
const MAX_DEPTH = 3;

export async function linkSequences(session: Session, selected: Operation[]): Promise<void> {
  for (const op of selected) {
    if (!hasLinks(op)) continue;
    const starts = positiveCases(op, RUNS_PER_SOURCE * 2, session.seedFor(`${op.id}:stateful`), session.generator, 'stateful').slice(0, RUNS_PER_SOURCE);
    for (const c of starts) {
      const step = await session.send(c);
      if (step) await follow(session, c, step, [step], 1);
    }
  }
}

function hasLinks(op: Operation): boolean {
  return Object.entries(op.responses).some(([status, r]) => status.startsWith('2') && r.links.length > 0);
}

async function follow(session: Session, c: Case, step: Step, history: Step[], depth: number): Promise<void> {
  if (depth > MAX_DEPTH || step.response.status < 200 || step.response.status >= 300) return;
  const def = c.operation.responses[String(step.response.status)] ?? c.operation.responses['2XX'];
  for (const link of def?.links ?? []) {
    const target = targetOf(session, link);
    if (!target) {
      session.warn(`${c.operation.label}: link ${link.name} names no known operation`);
      continue;
    }
    const next = linkedCase(session, link, target, c, step);
    if (!next) continue;
    const nextStep = await session.send(next, history);
    if (!nextStep) continue;
    const chain = [...history, nextStep];
    if (next.operation.method === 'delete' && nextStep.response.status >= 200 && nextStep.response.status < 300) {
      await probeFreed(session, next, chain);
    }
    await follow(session, next, nextStep, chain, depth + 1);
  }
}

function targetOf(session: Session, link: Link): Operation | undefined {
  if (link.operationId) return session.byId.get(link.operationId);
  const ref = link.operationRef?.match(/^#\/paths\/([^/]+)\/(\w+)$/);
  if (!ref) return undefined;
  const path = decodeURIComponent(ref[1]!).replace(/~1/g, '/').replace(/~0/g, '~');
  return session.operations.find((o) => o.path === path && o.method === ref[2]);
}

/** A valid case of `target` with the link's values in place. */
function linkedCase(session: Session, link: Link, target: Operation, source: Case, step: Step): Case | undefined {
  const base = positiveCases(target, 5, session.seedFor(`${target.id}:link:${link.name}`), session.generator, 'stateful')[0];
  if (!base) return undefined;
  const c: Case = {
    ...base,
    description: `via link ${source.operation.id} → ${link.name}`,
    path: { ...base.path },
    query: { ...base.query },
    headers: { ...base.headers },
    cookies: { ...base.cookies },
  };
  for (const [key, expression] of Object.entries(link.parameters)) {
    const value = evaluate(expression, source, step);
    if (value === undefined) return undefined; // the response lacks the linked value: response_schema_conformance speaks
    const [where, name] = key.includes('.') ? (key.split('.', 2) as [string, string]) : [undefined, key];
    const param = target.parameters.find((p) => p.name === name && (!where || p.in === where));
    if (!param) continue;
    bagOf(c, param.in)[param.name] = value;
  }
  if (link.requestBody !== undefined && c.body) c.body = { mediaType: c.body.mediaType, value: evaluate(link.requestBody, source, step) };
  return c;
}

/** After a DELETE succeeded: every other operation under the freed path, with the same path values. */
async function probeFreed(session: Session, deleted: Case, chain: Step[]): Promise<void> {
  const freedPath = deleted.operation.path;
  for (const op of session.operations) {
    if (op.method === 'delete' || !(op.path === freedPath || op.path.startsWith(`${freedPath}/`))) continue;
    const base = positiveCases(op, 5, session.seedFor(`${op.id}:after-free`), session.generator, 'stateful')[0];
    if (!base) continue;
    const c: Case = { ...base, description: `after ${deleted.operation.id} succeeded`, path: { ...base.path, ...deleted.path } };
    await session.send(c, chain);
  }
}
