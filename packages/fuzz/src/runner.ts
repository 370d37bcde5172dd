/**
 * @module The runner: loads the contract, generates every phase's cases per operation under one seed, sends them
 * through a transport, runs the checks, and collects failures (deduplicated, each with a curl reproduction).
 */
import { resolve } from 'node:path';
import { authenticate, credentialAppliers, type Credentials } from './auth.ts';
import { prepareRequest, type Case, type Phase, type PreparedRequest } from './case.ts';
import {
  CHECK_NAMES,
  errorStatusFromContract,
  DEFAULT_PROVIDER_NAMES,
  runChecks,
  type CheckConfig,
  type CheckName,
  type CheckOutcome,
  type Step,
} from './checks/index.ts';
import { loadDocument, type OpenApiDocument } from './contract/document.ts';
import { listOperations, streamsForever, type Operation } from './contract/operations.ts';
import { coverageCases, unsupportedMethodCases } from './phases/coverage.ts';
import { exampleCases } from './phases/examples.ts';
import { negativeCase, positiveCases, type Generator } from './phases/generate.ts';
import { domainSequences } from './phases/sequences.ts';
import { linkSequences } from './phases/stateful.ts';
import { freshSeed, hashSeed, Rng } from './random.ts';
import { curlCommand, secretNames } from './reports/curl.ts';
import { createValidator, type Validator } from './schema/validator.ts';
import { isRequestRateLimited, pacedTransport } from './pacing.ts';
import { httpTransport, inProcessTransport, type InProcessApp, type RecordedResponse, type Transport, type TransportOptions } from './transport.ts';

export const ALL_PHASES: Phase[] = ['examples', 'coverage', 'fuzzing', 'stateful'];

/** What a setup hook returns: credentials, plus known-good parameter values (e.g. a real inbound webhook slug). */
export interface FuzzSetup extends Credentials {
  parameters?: Record<string, unknown>;
}

export interface FuzzOptions {
  /** The bundled contract: a path (JSON or YAML) or the parsed document. Default `generated/openapi.json`. */
  contract?: string | OpenApiDocument;
  /** In-process target: anything with Hono's `app.request(path, init)`. */
  app?: InProcessApp;
  /** HTTP target, e.g. `http://127.0.0.1:3000`. */
  baseUrl?: string;
  /**
   * HTTP target only: at most this many requests per second; a request-rate 429 is always waited
   * out (`Retry-After`) and the case sent again (see ./pacing.ts).
   */
  rateLimitPerSec?: number;
  /** Or a ready transport. */
  transport?: Transport;
  /** For the built transports: how long an idle response stream is awaited, body cap, request timeout. */
  transportOptions?: TransportOptions;
  /** Replays a run exactly (same cases, same order). Random when absent; always reported. */
  seed?: number;
  /** Upper bound on requests sent in the whole run. Default 3000. */
  maxCases?: number;
  /** Stop starting new cases after this many seconds. */
  timeBudgetSec?: number;
  /** Only these operationIds. */
  operations?: string[];
  phases?: Phase[];
  checks?: CheckName[];
  credentials?: Credentials;
  /** Called once before the run, with the transport: create a workspace, an admin session, keys, a webhook. */
  setup?: (context: { transport: Transport; doc: OpenApiDocument }) => FuzzSetup | Promise<FuzzSetup>;
  /** Known-good parameter values by name, or `operationId.name` for one operation (e.g.
   *  `{ 'ingestInboundEvent.slug': 'crm-leads' }`), used in half of the generated cases. */
  parameters?: Record<string, unknown>;
  /** Error code → status; default: the team's table (pass `ERROR_STATUS` from `generated/errors.ts`). */
  errorStatus?: Record<string, number>;
  providerNames?: RegExp;
  positiveStatuses?: string[];
  /** Per operationId override of `positiveStatuses`, e.g. `{ ingestInboundEvent: ['2xx', '400', '401', '403', '404'] }`. */
  positiveStatusesByOperation?: Record<string, string[]>;
  /** Keep every request and response (needed for a cassette). */
  record?: boolean;
  /** Run polling in the stateful sequences. Defaults: every 50 ms in-process, 1 s over HTTP; give up after 30 s. */
  poll?: { intervalMs?: number; timeoutMs?: number };
  onProgress?: (event: ProgressEvent) => void;
}

export type ProgressEvent =
  | { type: 'start'; seed: number; operations: number; baseUrl: string }
  | { type: 'operation'; label: string; phase: Phase | 'all'; cases: number; failures: number }
  | { type: 'failure'; failure: Failure }
  /** Every 250 cases, so a long operation over HTTP still shows life. */
  | { type: 'tick'; cases: number; label: string }
  | { type: 'warning'; message: string }
  | { type: 'done'; result: FuzzResult };

export interface Failure {
  operationId: string;
  label: string;
  check: string;
  message: string;
  phase: Phase;
  kind: Case['kind'];
  description: string;
  curl: string;
  request: PreparedRequest;
  response?: { status: number; headers: Record<string, string>; body: string };
  /** How many cases failed the same way. */
  occurrences: number;
}

export interface Interaction {
  id: number;
  operationId: string;
  phase: Phase;
  kind: Case['kind'];
  description: string;
  request: PreparedRequest;
  response?: RecordedResponse;
  error?: string;
  checks: CheckOutcome[];
  recordedAt: string;
}

export interface OperationSummary {
  operationId: string;
  label: string;
  cases: number;
  elapsedMs: number;
  failures: number;
  checks: Partial<Record<string, { passed: number; failed: number }>>;
}

export interface FuzzResult {
  ok: boolean;
  seed: number;
  baseUrl: string;
  cases: number;
  durationMs: number;
  stoppedBy?: 'max-cases' | 'time-budget';
  operations: OperationSummary[];
  failures: Failure[];
  warnings: string[];
  interactions: Interaction[];
}

class BudgetExhausted extends Error {}

/** The state phases share: send a case, check it, record it. */
export interface Session {
  doc: OpenApiDocument;
  operations: Operation[];
  byId: Map<string, Operation>;
  generator: Generator;
  credentials: FuzzSetup;
  transport: Transport;
  seed: number;
  inProcess: boolean;
  poll: { intervalMs: number; timeoutMs: number };
  /** A deterministic generator for a label (operation, phase, ...). */
  rng(label: string): Rng;
  seedFor(label: string): number;
  /** Sends a case, runs every check, records the outcome; throws when the budget is spent. */
  send(c: Case, history?: Step[]): Promise<Step | undefined>;
  /** A failure found by a sequence (not by a per-response check). */
  fail(check: string, message: string, step: Step, c: Case): void;
  warn(message: string): void;
}

/** Runs the fuzzer. Resolves with the result; `result.ok` is true only when nothing failed. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzResult> {
  const started = performance.now();
  const doc = typeof options.contract === 'object' ? options.contract : loadDocument(resolve(options.contract ?? 'generated/openapi.json'));
  const transport =
    options.transport ??
    (options.app
      ? inProcessTransport(options.app, options.transportOptions)
      : options.baseUrl
        ? pacedTransport(httpTransport(options.baseUrl, options.transportOptions), options.rateLimitPerSec ? { ratePerSec: options.rateLimitPerSec } : {})
        : undefined);
  if (!transport) throw new Error('runFuzz needs `app` (in-process), `baseUrl` (HTTP) or `transport`');
  const inProcess = options.app !== undefined && options.transport === undefined;
  const seed = options.seed ?? freshSeed();
  const maxCases = options.maxCases ?? 3000;
  const deadline = options.timeBudgetSec !== undefined ? started + options.timeBudgetSec * 1000 : Infinity;
  const phases = new Set(options.phases ?? ALL_PHASES);
  const checkNames = options.checks ?? CHECK_NAMES;
  const all = listOperations(doc);
  // Operations that end the fuzzer's own session (logout) run after everything else needing it.
  const ordered = [...all.filter((o) => !endsSession(o)), ...all.filter(endsSession)];
  const selected = options.operations?.length ? ordered.filter((o) => options.operations!.includes(o.id)) : ordered;
  const last = selected.filter(endsSession);
  const unknown = (options.operations ?? []).filter((id) => !all.some((o) => o.id === id));
  if (unknown.length > 0) throw new Error(`unknown operationId(s): ${unknown.join(', ')}`);

  const setup = (await options.setup?.({ transport, doc })) ?? {};
  const credentials: FuzzSetup = { ...options.credentials, ...setup, parameters: { ...options.parameters, ...setup.parameters } };
  const appliers = credentialAppliers(doc, credentials);
  const secrets = secretNames(credentials);
  const validator = createValidator(doc);
  const generator: Generator = { doc, validator, parameters: credentials.parameters ?? {} };
  const config: CheckConfig = {
    errorStatus: options.errorStatus ?? errorStatusFromContract(doc),
    providerNames: options.providerNames ?? DEFAULT_PROVIDER_NAMES,
    positiveStatuses: options.positiveStatuses ?? ['2xx', '401', '403', '404'],
    positiveStatusesByOperation: options.positiveStatusesByOperation,
  };

  const failures = new Map<string, Failure>();
  const summaries = new Map<string, OperationSummary>();
  const interactions: Interaction[] = [];
  const warnings: string[] = [];
  let rateLimited = 0;
  let cases = 0;
  let stoppedBy: FuzzResult['stoppedBy'];
  let phaseDeadline = deadline;
  const progress = options.onProgress ?? (() => undefined);

  const summary = (op: Operation) => {
    let s = summaries.get(op.id);
    if (!s) summaries.set(op.id, (s = { operationId: op.id, label: op.label, cases: 0, elapsedMs: 0, failures: 0, checks: {} }));
    return s;
  };

  const recordFailure = (c: Case, step: { request: PreparedRequest; response?: RecordedResponse }, check: string, message: string) => {
    const op = c.operation;
    // The same fault with other data (values, ids, numbers) is one failure seen several times.
    const key = `${op.id}|${check}|${message
      .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
      .replace(/\d+/g, '#')
      .slice(0, 120)}`;
    const existing = failures.get(key);
    summary(op).failures++;
    if (existing) {
      existing.occurrences++;
      return;
    }
    const failure: Failure = {
      operationId: op.id,
      label: op.label,
      check,
      message,
      phase: c.phase,
      kind: c.kind,
      description: c.description,
      curl: curlCommand(transport.baseUrl, step.request, secrets),
      request: step.request,
      response: step.response ? { status: step.response.status, headers: step.response.headers, body: step.response.text.slice(0, 2000) } : undefined,
      occurrences: 1,
    };
    failures.set(key, failure);
    progress({ type: 'failure', failure });
  };

  const session: Session = {
    doc,
    operations: all,
    byId: new Map(all.map((o) => [o.id, o])),
    generator,
    credentials,
    transport,
    seed,
    inProcess,
    poll: { intervalMs: options.poll?.intervalMs ?? (inProcess ? 50 : 1000), timeoutMs: options.poll?.timeoutMs ?? 30_000 },
    rng: (label) => new Rng(hashSeed(seed, label)),
    seedFor: (label) => hashSeed(seed, label),
    async send(c, history = []) {
      if (cases >= maxCases) {
        stoppedBy ??= 'max-cases';
        throw new BudgetExhausted();
      }
      if (performance.now() > phaseDeadline) {
        stoppedBy ??= 'time-budget';
        throw new BudgetExhausted();
      }
      cases++;
      const op = c.operation;
      if (cases % 250 === 0) progress({ type: 'tick', cases, label: op.label });
      const request = prepareRequest(c);
      if (!c.withoutAuth && !c.customAuth) authenticate(request, op, appliers, c.pinned);
      freshIdempotencyKey(request, c, validator, hashSeed(seed, `idempotency:${cases}`));
      // Credentials may bring a header (X-CSRF-Token) the case leaves out on purpose.
      if (c.missingHeader) for (const k of Object.keys(request.headers)) if (k.toLowerCase() === c.missingHeader.toLowerCase()) delete request.headers[k];
      // A quarter of the requests bring their own X-Request-Id, which must come back (request_id_echoed).
      if (cases % 4 === 0 && !Object.keys(request.headers).some((k) => k.toLowerCase() === 'x-request-id')) {
        request.headers['X-Request-Id'] = `fuzz-${seed}-${cases}`;
      }
      const s = summary(op);
      s.cases++;
      let response: RecordedResponse | undefined;
      let error: string | undefined;
      try {
        response = await transport.send(request);
      } catch (e) {
        const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
        error = `request failed: ${(e as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`;
      }
      if (!response) {
        recordFailure(c, { request }, 'not_a_server_error', error ?? 'no response');
        if (options.record)
          interactions.push({
            id: cases,
            operationId: op.id,
            phase: c.phase,
            kind: c.kind,
            description: c.description,
            request,
            error,
            checks: [],
            recordedAt: new Date().toISOString(),
          });
        return undefined;
      }
      s.elapsedMs += response.elapsedMs;
      if (isRequestRateLimited(response)) {
        // Still limited after waiting: the deployment's rate limit, not a finding. Nothing is checked.
        rateLimited += 1;
        if (options.record)
          interactions.push({
            id: cases,
            operationId: op.id,
            phase: c.phase,
            kind: c.kind,
            description: c.description,
            request,
            response,
            checks: [],
            recordedAt: new Date().toISOString(),
          });
        return undefined;
      }
      const step: Step = { operation: op, request, response };
      const outcomes = runChecks({ operation: op, case: c, request, response, validator, doc, config, history }, checkNames);
      for (const o of outcomes) {
        const tally = (s.checks[o.check] ??= { passed: 0, failed: 0 });
        if (o.failure) {
          tally.failed++;
          recordFailure(c, step, o.check, o.failure);
        } else tally.passed++;
      }
      if (options.record)
        interactions.push({
          id: cases,
          operationId: op.id,
          phase: c.phase,
          kind: c.kind,
          description: c.description,
          request,
          response,
          checks: outcomes,
          recordedAt: new Date().toISOString(),
        });
      return step;
    },
    fail(check, message, step, c) {
      const tally = (summary(c.operation).checks[check] ??= { passed: 0, failed: 0 });
      tally.failed++;
      recordFailure(c, step, check, message);
    },
    warn(message) {
      warnings.push(message);
      progress({ type: 'warning', message });
    },
  };

  progress({ type: 'start', seed, operations: selected.length, baseUrl: transport.baseUrl });
  const statefulShare = phases.has('stateful') ? 0.1 : 0;
  const perOperation = Math.max(3, Math.floor((maxCases * (1 - statefulShare)) / Math.max(1, selected.length)));
  if (deadline !== Infinity && phases.has('stateful')) phaseDeadline = started + (deadline - started) * 0.85;
  const pathsDone = new Set<string>();

  try {
    for (const op of selected.filter((o) => !last.includes(o))) {
      const before = summary(op).cases;
      const failuresBefore = summary(op).failures;
      try {
        await runOperation(session, op, perOperation, phases, pathsDone);
      } catch (e) {
        if (!(e instanceof BudgetExhausted)) throw e;
        if (stoppedBy === 'time-budget' || cases >= maxCases) break;
      } finally {
        const s = summary(op);
        progress({ type: 'operation', label: op.label, phase: 'all', cases: s.cases - before, failures: s.failures - failuresBefore });
      }
    }
    if (phases.has('stateful')) {
      phaseDeadline = deadline;
      if (stoppedBy === 'time-budget' && performance.now() < deadline) stoppedBy = undefined;
      try {
        const statefulOps = selected;
        await linkSequences(session, statefulOps);
        await domainSequences(session, new Set(selected.map((o) => o.id)));
      } catch (e) {
        if (!(e instanceof BudgetExhausted)) throw e;
      }
    }
    for (const op of last) {
      phaseDeadline = deadline;
      try {
        await runOperation(session, op, perOperation, phases, pathsDone);
      } catch (e) {
        if (!(e instanceof BudgetExhausted)) throw e;
      }
      progress({ type: 'operation', label: op.label, phase: 'all', cases: summary(op).cases, failures: summary(op).failures });
    }
  } finally {
    // keep whatever was gathered
  }

  if (rateLimited > 0) warnings.push(`${rateLimited} case(s) still answered 429 rate_limit_exceeded after waiting; not checked (try --rate-limit)`);
  const result: FuzzResult = {
    ok: failures.size === 0,
    seed,
    baseUrl: transport.baseUrl,
    cases,
    durationMs: performance.now() - started,
    stoppedBy,
    operations: selected.map((o) => summary(o)).concat([...summaries.values()].filter((s) => !selected.some((o) => o.id === s.operationId))),
    failures: [...failures.values()],
    warnings,
    interactions,
  };
  progress({ type: 'done', result });
  return result;
}

/** Examples, coverage and fuzzing for one operation, within its share of the case budget. */
async function runOperation(session: Session, op: Operation, allotted: number, phases: Set<Phase>, pathsDone: Set<string>): Promise<void> {
  // An endless event stream costs an idle timeout per successful case: a few dozen cases say enough.
  const budget = streamsForever(op) ? Math.min(allotted, 20) : allotted;
  const g = session.generator;
  const label = `${op.id}`;
  let spent = 0;
  const send = async (c: Case) => {
    spent++;
    await session.send(c);
  };
  // A valid base case every deterministic phase varies from.
  // Known-good values (a real webhook slug, ...) always: coverage then probes one thing at a time past them.
  const base = positiveCases(op, 20, session.seedFor(`${label}:base`), g, 'coverage', 1)[0];
  if (!base) session.warn(`${op.label}: could not generate a valid request (schemas unsatisfiable for the generator)`);

  if (phases.has('examples')) {
    const { cases, invalid } = exampleCases(op, base, g);
    for (const message of invalid) session.warn(message);
    for (const c of cases) await send(c);
  }
  const fuzzingReserve = phases.has('fuzzing') ? Math.ceil(budget * 0.3) : 0;
  if (phases.has('coverage') && base) {
    const coverage = coverageCases(op, base, g);
    if (!pathsDone.has(op.path)) {
      pathsDone.add(op.path);
      coverage.push(...unsupportedMethodCases(session.operations, base));
    }
    const room = Math.max(0, budget - spent - fuzzingReserve);
    if (coverage.length > room) session.warn(`${op.label}: coverage phase cut to ${room} of ${coverage.length} cases by --max-cases`);
    for (const c of coverage.slice(0, room)) await send(c);
  }
  if (phases.has('fuzzing')) {
    const n = Math.max(0, budget - spent);
    const positives = positiveCases(op, Math.ceil(n / 2) + 5, session.seedFor(`${label}:fuzzing`), g, 'fuzzing');
    const rng = session.rng(`${label}:negative`);
    for (let i = 0; i < n && positives.length > 0; i++) {
      const p = positives[Math.floor(i / 2) % positives.length]!;
      const c = i % 2 === 0 ? p : negativeCase(p, rng, g);
      if (c) await send(c);
    }
  }
}

function endsSession(op: Operation): boolean {
  return /log-?out|sign-?out/i.test(op.id) || /\/(logout|signout)$/i.test(op.path);
}

/**
 * An idempotency key names one logical request: reusing one (an example's, or a repeated generated value)
 * with another body is rightly refused. Each case gets its own, unless the case is about that header.
 */
function freshIdempotencyKey(request: PreparedRequest, c: Case, validator: Validator, seed: number): void {
  const param = c.operation.parameters.find((p) => p.in === 'header' && /^idempotency-key$/i.test(p.name));
  if (!param || c.missingHeader || c.kind === 'negative' || c.pinned?.includes(param.name)) return;
  const header = Object.keys(request.headers).find((k) => k.toLowerCase() === param.name.toLowerCase());
  if (!header) return;
  const rng = new Rng(seed);
  const hex = (n: number) => Array.from({ length: n }, () => rng.int(0, 15).toString(16)).join('');
  const candidates = [`${hex(8)}-${hex(4)}-4${hex(3)}-${['8', '9', 'a', 'b'][rng.int(0, 3)]}${hex(3)}-${hex(12)}`, `fuzz-${hex(24)}`];
  const fresh = candidates.find((v) => validator.isValid(param.schema, v));
  if (fresh) request.headers[header] = fresh;
}
