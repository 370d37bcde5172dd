#!/usr/bin/env -S npx tsx
/**
 * @module The `service-fuzz` command (`pnpm fuzz`): fuzz a running server over HTTP (`--base-url`) or an app
 * in-process (`--app MODULE`), print the seed, progress and a curl command per failure, write JUnit or a
 * cassette, and exit 0 only when nothing failed.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Credentials } from './auth.ts';
import type { Phase } from './case.ts';
import { CHECK_NAMES, type CheckName } from './checks/index.ts';
import { cassetteReport } from './reports/cassette.ts';
import { secretNames } from './reports/curl.ts';
import { junitReport } from './reports/junit.ts';
import { parseRate } from './pacing.ts';
import { ALL_PHASES, runFuzz, type FuzzOptions, type FuzzResult, type ProgressEvent } from './runner.ts';
import type { InProcessApp } from './transport.ts';

const HELP = `Usage: service-fuzz (--base-url URL | --app MODULE) [options]

Contract fuzzer: generates requests from the bundled OpenAPI document and runs Schemathesis's checks
(not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
response_schema_conformance, negative_data_rejection, positive_data_acceptance, missing_required_header,
unsupported_method, use_after_free, ensure_resource_availability, ignored_auth) and the service's own
(rate_limit_headers_present, request_id_echoed, error_body_conformance, no_provider_leak).

Target (one of):
  --base-url URL        a running server, the Prism mock, or a deployment (plain HTTP(S))
  --app MODULE          in-process: a module exporting fuzzTarget() → { app, setup?, credentials?, parameters?, close? }

Options:
  --api-key K           API key for API-key routes (default: $SERVICE_API_KEY)
  --seed S              replay a run exactly (the seed is printed at start)
  --max-cases N         upper bound on requests (default 3000)
  --rate-limit N/s      at most N requests per second (or N/m per minute) against --base-url; a 429
                        rate_limit_exceeded is always waited out (Retry-After) and the case sent again
  --time-budget S       stop starting new cases after S seconds
  --report junit|cassette   write a report (both: --report junit --report cassette)
  --output FILE         report file (default fuzz-report.xml / fuzz-cassette.yaml)
  --operation ID        only this operationId (repeatable, or comma-separated)
  --phases LIST         examples,coverage,fuzzing,stateful (default: all)
  --checks LIST         subset of the checks above (default: all)
  --contract FILE       bundled OpenAPI (default: the nearest generated/openapi.json)
  --quiet               no progress lines
  -h, --help            this text

More credentials for the stateful journeys and admin routes (environment):
  SERVICE_SESSION_COOKIE  e.g. "service_session=..." (admin session)   SERVICE_CSRF_TOKEN  the login's csrfToken
  SERVICE_MCP_TOKEN       MCP token                                  SERVICE_INBOUND_SLUG / SERVICE_INBOUND_SECRET

Exit status: 0 when nothing failed, 1 when a check failed, 2 on a usage or setup error.`;

interface FuzzTarget {
  app: InProcessApp;
  setup?: FuzzOptions['setup'];
  credentials?: Credentials;
  parameters?: Record<string, unknown>;
  errorStatus?: Record<string, number>;
  close?: () => unknown;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'base-url': { type: 'string' },
      app: { type: 'string' },
      'api-key': { type: 'string' },
      seed: { type: 'string' },
      'max-cases': { type: 'string' },
      'rate-limit': { type: 'string' },
      'time-budget': { type: 'string' },
      report: { type: 'string', multiple: true },
      output: { type: 'string' },
      operation: { type: 'string', multiple: true },
      phases: { type: 'string' },
      checks: { type: 'string' },
      contract: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values['base-url'] === !values.app) return usage('give exactly one of --base-url and --app');
  const reports = (values.report ?? []).flatMap((r) => r.split(','));
  for (const r of reports) if (r !== 'junit' && r !== 'cassette') return usage(`unknown report "${r}"`);
  if (values.output && reports.length !== 1) return usage('--output goes with exactly one --report');
  const phases = values.phases?.split(',') as Phase[] | undefined;
  for (const p of phases ?? []) if (!ALL_PHASES.includes(p)) return usage(`unknown phase "${p}"`);
  const checks = values.checks?.split(',') as CheckName[] | undefined;
  for (const c of checks ?? []) if (!CHECK_NAMES.includes(c)) return usage(`unknown check "${c}"`);
  const int = (name: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
    return n;
  };

  const rate = (v: string) => {
    try {
      return parseRate(v);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  };
  if (values['rate-limit'] && !values['base-url']) return usage('--rate-limit goes with --base-url');
  if (values['rate-limit']) rate(values['rate-limit']);
  const contract = values.contract ? resolve(values.contract) : findUp('generated/openapi.json');
  if (!contract || !existsSync(contract)) return usage('no bundled contract found (generated/openapi.json); run `pnpm generate` or pass --contract');
  const env = process.env;
  const credentials: Credentials = {
    apiKey: values['api-key'] ?? env.SERVICE_API_KEY,
    mcpToken: env.SERVICE_MCP_TOKEN,
    adminSession: env.SERVICE_SESSION_COOKIE ? { cookie: env.SERVICE_SESSION_COOKIE, csrfToken: env.SERVICE_CSRF_TOKEN } : undefined,
    inbound: env.SERVICE_INBOUND_SECRET ? { secret: env.SERVICE_INBOUND_SECRET, slug: env.SERVICE_INBOUND_SLUG } : undefined,
  };
  const target = values.app ? await loadTarget(values.app) : undefined;
  const parameters = { ...(env.SERVICE_INBOUND_SLUG ? { slug: env.SERVICE_INBOUND_SLUG } : {}), ...target?.parameters };
  const quiet = values.quiet === true;
  let setupCredentials: Credentials = {};
  try {
    const result = await runFuzz({
      contract,
      app: target?.app,
      baseUrl: values['base-url'],
      seed: int('seed', values.seed),
      maxCases: int('max-cases', values['max-cases']),
      ...(values['rate-limit'] ? { rateLimitPerSec: rate(values['rate-limit']) } : {}),
      timeBudgetSec: int('time-budget', values['time-budget']),
      operations: values.operation?.flatMap((o) => o.split(',')),
      phases,
      checks,
      credentials: { ...credentials, ...target?.credentials },
      setup: target?.setup
        ? async (ctx) => {
            const s = await target.setup!(ctx);
            setupCredentials = s;
            return s;
          }
        : undefined,
      parameters,
      errorStatus: target?.errorStatus,
      record: reports.includes('cassette'),
      onProgress: (e) => progress(e, quiet),
    });
    const secrets = secretNames({ ...credentials, ...target?.credentials, ...setupCredentials });
    for (const r of reports) {
      const file = values.output ?? (r === 'junit' ? 'fuzz-report.xml' : 'fuzz-cassette.yaml');
      writeFileSync(file, r === 'junit' ? junitReport(result) : cassetteReport(result, `service-fuzz ${argv.join(' ')}`, secrets));
      console.error(`${r} report written to ${file}`);
    }
    printSummary(result);
    return result.ok ? 0 : 1;
  } finally {
    await target?.close?.();
  }
}

class UsageError extends Error {}

function usage(message: string): number {
  console.error(`service-fuzz: ${message}\nRun with --help for usage.`);
  return 2;
}

async function loadTarget(module: string): Promise<FuzzTarget> {
  const mod = (await import(pathToFileURL(resolve(module)).href)) as {
    fuzzTarget?: () => Promise<FuzzTarget> | FuzzTarget;
    default?: () => Promise<FuzzTarget> | FuzzTarget;
  };
  const factory = mod.fuzzTarget ?? mod.default;
  if (typeof factory !== 'function') throw new UsageError(`${module} exports no fuzzTarget() function`);
  return factory();
}

/** `ERROR_STATUS` of `generated/errors.ts` beside the contract, when it exists. */
function findUp(relative: string): string | undefined {
  let dir = process.cwd();
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function progress(e: ProgressEvent, quiet: boolean): void {
  if (e.type === 'start') {
    console.error(`service-fuzz: ${e.operations} operations against ${e.baseUrl}`);
    console.error(`Seed: ${e.seed}   (replay this run with --seed ${e.seed})`);
    return;
  }
  if (quiet) return;
  if (e.type === 'operation') {
    const mark = e.failures > 0 ? 'FAILED' : 'ok';
    console.error(`  ${e.label.padEnd(48, '.')} ${String(e.cases).padStart(5)} cases  ${mark}`);
  } else if (e.type === 'failure') {
    console.error(`    ✗ ${e.failure.check}: ${e.failure.message.slice(0, 160)}`);
  } else if (e.type === 'tick') {
    console.error(`  … ${e.cases} cases (${e.label})`);
  } else if (e.type === 'warning') {
    console.error(`    ! ${e.message}`);
  }
}

function printSummary(r: FuzzResult): void {
  const out: string[] = [];
  if (r.failures.length > 0) {
    out.push('', `FAILURES (${r.failures.length})`);
    for (const [i, f] of r.failures.entries()) {
      out.push('', `${i + 1}. ${f.label} · ${f.check}${f.occurrences > 1 ? ` · ${f.occurrences} cases` : ''}`);
      out.push(`   ${f.message}`);
      out.push(`   case: ${f.phase}, ${f.kind} data: ${f.description}`);
      if (f.response) out.push(`   response: ${f.response.status} ${f.response.body.slice(0, 200)}`);
      out.push(`   Reproduce with:`, `   ${f.curl}`);
    }
  }
  out.push(
    '',
    `${r.cases} cases in ${(r.durationMs / 1000).toFixed(1)} s, ${r.failures.length} distinct failures${r.stoppedBy ? ` (stopped by ${r.stoppedBy})` : ''}. Seed: ${r.seed}`,
  );
  console.log(out.join('\n'));
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = (error as Error).message ?? '';
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') || message.startsWith('unknown operationId')) {
      process.exitCode = usage(message);
    } else {
      console.error(`service-fuzz: ${(error as Error).stack ?? String(error)}`);
      process.exitCode = 2;
    }
  },
);
