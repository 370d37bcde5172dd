/**
 * @module The stateful phase, part two: the service's own journeys, which links cannot express.
 * - key rotation: create a key, use it, rotate it; the old secret gets 401, the new one 2xx;
 * - revocation: a key used a moment ago (so any cache is warm) is refused right after its revocation;
 * - run lifecycle: invoke, then poll the run to a terminal state; states only move forward;
 * - inbound idempotency: the same signed event sent twice gives one run and a `duplicate`.
 * They need credentials from the setup hook; a journey whose credentials or routes are missing is skipped
 * with a warning (never passed silently).
 */
import type { Case } from '../case.ts';
import type { Step } from '../checks/index.ts';
import { isObject } from '../contract/document.ts';
import type { Operation } from '../contract/operations.ts';
import type { Session } from '../runner.ts';
import { bagOf, bodyMedia, positiveCases } from './generate.ts';

const TERMINAL = new Set(['completed', 'failed', 'canceled']);

export async function domainSequences(session: Session, selected: Set<string>): Promise<void> {
  await keyJourneys(session, selected);
  await runLifecycle(session, selected);
  await inboundIdempotency(session, selected);
}

/** A valid case of `op` with some parts forced. */
function caseFor(
  session: Session,
  op: Operation,
  description: string,
  parts: { path?: Record<string, unknown>; query?: Record<string, unknown>; headers?: Record<string, unknown>; body?: unknown } = {},
): Case {
  const base = positiveCases(op, 5, session.seedFor(`${op.id}:sequence`), session.generator, 'stateful')[0];
  const media = bodyMedia(op);
  const c: Case = {
    operation: op,
    phase: 'stateful',
    kind: 'positive',
    description,
    path: { ...base?.path, ...parts.path },
    query: { ...base?.query, ...parts.query },
    headers: { ...base?.headers, ...parts.headers },
    cookies: { ...base?.cookies },
    body: parts.body !== undefined && media ? { mediaType: media.type, value: parts.body } : base?.body,
  };
  return c;
}

function json(step: Step | undefined): Record<string, unknown> {
  if (!step) return {};
  try {
    const v = JSON.parse(step.response.text);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

const ok = (step: Step | undefined) => step !== undefined && step.response.status >= 200 && step.response.status < 300;

function first(session: Session, ids: string[], selected: Set<string>): Operation | undefined {
  for (const id of ids) {
    const op = session.byId.get(id);
    if (op && selected.has(id)) return op;
  }
  return undefined;
}

function apiKeyScopes(op: Operation): string[] | undefined {
  const alt = op.security.find((a) => 'apiKey' in a);
  return alt?.apiKey;
}

/** An operation to prove a key works: a GET with API-key auth and no required parameters that answers 2xx
 *  to the run's own key (a route this deployment does not serve yet cannot prove anything). */
async function probeOperation(session: Session): Promise<Operation | undefined> {
  const preferred = ['getCurrentUsage', 'getUsageV1', 'listRuns', 'listRunsV1', 'listAgents'];
  const candidates = [
    ...new Set([...preferred.map((id) => session.byId.get(id)).filter((o): o is Operation => o !== undefined), ...session.operations]),
  ].filter((o) => o.method === 'get' && apiKeyScopes(o) !== undefined && o.parameters.every((p) => !p.required || p.in === 'header'));
  for (const op of candidates.slice(0, 6)) {
    if (ok(await session.send(caseFor(session, op, 'find a route that proves a key works')))) return op;
  }
  return undefined;
}

async function keyJourneys(session: Session, selected: Set<string>): Promise<void> {
  const create = first(session, ['createApiKey', 'createApiKeyV1'], selected);
  const rotate = first(session, ['rotateApiKey', 'rotateApiKeyV1'], selected);
  const revoke = first(session, ['revokeApiKey', 'revokeApiKeyV1'], selected);
  if (!create || !rotate || !revoke) return session.warn('stateful: key journeys skipped (key management is not in the run)');
  if (!session.credentials.adminSession || !session.credentials.apiKey)
    return session.warn('stateful: key journeys skipped (the setup hook gave no adminSession or apiKey)');
  const probe = await probeOperation(session);
  if (!probe) return session.warn("stateful: key journeys skipped (no key-authenticated GET answered 2xx to the run's API key)");
  const scopes = apiKeyScopes(probe)!;
  const use = (secret: string, why: string) =>
    session.send({ ...caseFor(session, probe, why, { headers: { Authorization: `Bearer ${secret}` } }), customAuth: true });

  const template = caseFor(session, create, 'create a key for the rotation journey');
  const generated = template.body && 'value' in template.body && isObject(template.body.value) ? template.body.value : {};
  const body = { ...generated, name: `fuzz rotation ${session.seed}`, expiresInDays: 1, ...(scopes.length > 0 ? { scopes: scopes.slice(0, 1) } : {}) };
  const created = await session.send(caseFor(session, create, 'create a key for the rotation journey', { body }));
  const key = json(created);
  if (!ok(created) || typeof key.secret !== 'string' || typeof key.id !== 'string') {
    return session.warn(`stateful: key creation answered ${created?.response.status ?? 'nothing'} without id and secret; key journeys skipped`);
  }
  const firstUse = await use(key.secret, 'use the key just created');
  if (firstUse && !ok(firstUse))
    session.fail(
      'ensure_resource_availability',
      `A key just created is refused: ${firstUse.response.status} on ${probe.label}`,
      firstUse,
      caseFor(session, probe, 'use the key just created'),
    );

  const rotateCase = caseFor(session, rotate, 'rotate the key', { path: { id: key.id } });
  const rotated = await session.send(rotateCase, created ? [created] : []);
  const next = json(rotated);
  if (!ok(rotated) || typeof next.secret !== 'string' || typeof next.id !== 'string') {
    return session.warn(`stateful: rotation answered ${rotated?.response.status ?? 'nothing'} without id and secret; rest of the key journeys skipped`);
  }
  const oldUse = await use(key.secret, 'use the rotated (old) key');
  if (oldUse && oldUse.response.status !== 401)
    session.fail(
      'use_after_free',
      `The old key still works after rotation: ${oldUse.response.status} on ${probe.label} (expected 401)`,
      oldUse,
      caseFor(session, probe, 'use the rotated (old) key'),
    );
  const newUse = await use(next.secret, 'use the new key from the rotation');
  if (newUse && !ok(newUse))
    session.fail(
      'ensure_resource_availability',
      `The new key from the rotation is refused: ${newUse.response.status} on ${probe.label}`,
      newUse,
      caseFor(session, probe, 'use the new key'),
    );

  // newUse warmed any key cache: revocation must still take effect at once.
  const revoked = await session.send(caseFor(session, revoke, 'revoke the key', { path: { id: next.id } }));
  if (!ok(revoked)) return session.warn(`stateful: revocation answered ${revoked?.response.status ?? 'nothing'}; revocation journey skipped`);
  const afterRevoke = await use(next.secret, 'use the key right after its revocation');
  if (afterRevoke && afterRevoke.response.status !== 401)
    session.fail(
      'use_after_free',
      `A revoked key still works: ${afterRevoke.response.status} on ${probe.label} (expected 401)`,
      afterRevoke,
      caseFor(session, probe, 'use the revoked key'),
    );
  // The revoked key's own routes must not act on it any more (rotate a revoked key).
  await session.send(caseFor(session, rotate, 'rotate a revoked key', { path: { id: next.id } }), revoked ? [revoked] : []);
}

async function runLifecycle(session: Session, selected: Set<string>): Promise<void> {
  const get = first(session, ['getRun', 'getRunV1'], selected);
  const invokers = ['createInference', 'sendOrchestratorMessage', 'sendAgentMessage']
    .map((id) => session.byId.get(id))
    .filter((o): o is Operation => o !== undefined && selected.has(o.id));
  if (!get || invokers.length === 0) return session.warn('stateful: run lifecycle skipped (no invocation route or getRun in the run)');
  if (!session.credentials.apiKey) return session.warn('stateful: run lifecycle skipped (no apiKey)');
  let runId: string | undefined;
  for (const op of invokers) {
    const media = bodyMedia(op);
    const example = media?.examples.find((e) => isObject(e) && e.stream !== true);
    const body = isObject(example) ? { ...example, stream: false } : { alias: 'Prelude', messages: [{ role: 'user', content: 'Hello' }] };
    const invoked = await session.send(caseFor(session, op, 'invoke for the run lifecycle', { path: { slug: 'orchestrator' }, body }));
    const b = json(invoked);
    const id = b.runId ?? b.run_id ?? (isObject(b.run) ? b.run.id : undefined);
    if (ok(invoked) && typeof id === 'string') {
      runId = id;
      break;
    }
  }
  if (!runId) return session.warn('stateful: no invocation route answered 2xx with a runId; run lifecycle skipped');
  const statuses: string[] = [];
  const started = performance.now();
  for (;;) {
    const c = caseFor(session, get, `poll run ${runId}`, { path: { run_id: runId } });
    const step = await session.send(c);
    if (!step) return;
    if (step.response.status === 404) return session.fail('ensure_resource_availability', `Run ${runId} from the invocation is not found`, step, c);
    if (!ok(step)) return session.warn(`stateful: polling answered ${step.response.status}; run lifecycle stopped`);
    const body = json(step);
    const status = (isObject(body.run) ? body.run.status : body.status) as string | undefined;
    if (typeof status !== 'string') return;
    const previous = statuses[statuses.length - 1];
    statuses.push(status);
    if (previous !== undefined && TERMINAL.has(previous) && status !== previous) {
      return session.fail('run_states_forward', `Run ${runId} moved from terminal ${previous} to ${status} (seen: ${statuses.join(' → ')})`, step, c);
    }
    if (TERMINAL.has(status)) {
      // One more read: a terminal state stays put.
      const again = await session.send(c);
      const s2 = json(again);
      const status2 = isObject(s2.run) ? s2.run.status : s2.status;
      if (again && ok(again) && status2 !== status)
        session.fail('run_states_forward', `Run ${runId} left terminal state ${status} for ${String(status2)}`, again, c);
      return;
    }
    if (performance.now() - started > session.poll.timeoutMs) {
      return session.fail('run_states_forward', `Run ${runId} still ${status} after ${session.poll.timeoutMs} ms of polling`, step, c);
    }
    await new Promise((r) => setTimeout(r, session.poll.intervalMs));
  }
}

async function inboundIdempotency(session: Session, selected: Set<string>): Promise<void> {
  const ingest = first(session, ['ingestInboundEvent', 'ingestInboundEventV1'], selected);
  const inbound = session.credentials.inbound;
  const slug = inbound?.slug ?? session.credentials.parameters?.slug;
  if (!ingest) return;
  if (!inbound || typeof slug !== 'string') return session.warn('stateful: inbound idempotency skipped (the setup hook gave no inbound { slug, secret })');
  const list = first(session, ['listRuns', 'listRunsV1'], selected);
  const total = async (why: string) => {
    if (!list || !session.credentials.apiKey) return undefined;
    // Every filter left out: the total counts every run of the workspace.
    const unfiltered = { status: undefined, agent_slug: undefined, alias: undefined, source: undefined, createdAfter: undefined, createdBefore: undefined };
    const step = await session.send(caseFor(session, list, why, { query: { limit: 1, offset: 0, ...unfiltered } }));
    const t = json(step).total;
    return ok(step) && typeof t === 'number' ? t : undefined;
  };
  const before = await total('count runs before the inbound event');
  // Fresh per process, so a replayed seed against a kept database still sends a new event first.
  const eventId = `evt_fuzz${session.seed}${Date.now().toString(36)}`;
  const header = ingest.parameters.find((p) => p.in === 'header' && /event-id/i.test(p.name))?.name ?? 'X-SERVICE-Event-Id';
  const body = {
    event: 'contact.created',
    id: eventId,
    occurred_at: new Date().toISOString(),
    contact: { name: 'Dana Whitfield', email: 'dana@example.com' },
    source: 'fuzz',
  };
  const send = async (why: string) => {
    const c = caseFor(session, ingest, why, { path: { slug }, body });
    for (const k of Object.keys(c.headers)) if (/event-id|webhook-id|hook-id/i.test(k)) delete c.headers[k];
    bagOf(c, 'header')[header] = eventId;
    return { c, step: await session.send(c) };
  };
  const one = await send('inbound event, first delivery');
  const b1 = json(one.step);
  if (!ok(one.step) || b1.code !== 'ok' || typeof b1.runId !== 'string') {
    return session.warn(
      `stateful: first inbound delivery answered ${one.step?.response.status ?? 'nothing'} ${JSON.stringify(b1).slice(0, 120)}; idempotency not checked`,
    );
  }
  const two = await send('inbound event, same id again');
  const b2 = json(two.step);
  if (two.step && (!ok(two.step) || b2.code !== 'duplicate' || 'runId' in b2)) {
    session.fail(
      'inbound_event_idempotent',
      `A repeated event id must answer 200 {code: "duplicate"} without a runId; got ${two.step.response.status} ${JSON.stringify(b2).slice(0, 160)}`,
      two.step,
      two.c,
    );
  }
  const after = await total('count runs after the inbound event');
  if (before !== undefined && after !== undefined && after - before !== 1 && two.step) {
    session.fail('inbound_event_idempotent', `One event sent twice made ${after - before} runs (expected 1)`, two.step, two.c);
  }
}
