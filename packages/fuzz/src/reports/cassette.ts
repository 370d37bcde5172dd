/**
 * @module A cassette in the shape of Schemathesis's VCR cassettes (YAML): every interaction with its request,
 * response and check outcomes, so the same tooling (and people used to it) can read our runs.
 */
import { stringify } from 'yaml';
import type { FuzzResult, Interaction } from '../runner.ts';
import type { SecretNames } from './curl.ts';

export function cassetteReport(result: FuzzResult, command: string, secrets: SecretNames = new Map()): string {
  const mask = (text: string) => {
    let out = text;
    for (const [secret, name] of secrets) if (secret.length >= 6) out = out.split(secret).join(`$${name}`);
    return out;
  };
  const interactions = result.interactions.map((i) => interaction(i, result, mask));
  return stringify(
    { command, recorded_with: 'service-fuzz (Schemathesis-compatible cassette)', seed: String(result.seed), http_interactions: interactions },
    { lineWidth: 0 },
  );
}

function interaction(i: Interaction, result: FuzzResult, mask: (t: string) => string) {
  const failed = i.error !== undefined || i.checks.some((c) => c.failure);
  return {
    id: String(i.id),
    status: i.error ? 'ERROR' : failed ? 'FAILURE' : 'SUCCESS',
    seed: String(result.seed),
    thread_id: 1,
    correlation_id: i.operationId,
    data_generation_method: i.kind,
    phase: { name: i.phase, data: { description: i.description } },
    elapsed: i.response ? (i.response.elapsedMs / 1000).toFixed(4) : '0',
    recorded_at: i.recordedAt,
    checks: i.checks.map((c) => ({ name: c.check, status: c.failure ? 'FAILURE' : 'SUCCESS', message: c.failure ?? '' })),
    request: {
      uri: result.baseUrl + i.request.path,
      method: i.request.method,
      headers: Object.fromEntries(Object.entries(i.request.headers).map(([k, v]) => [k, [mask(v)]])),
      ...(i.request.body !== undefined ? { body: { encoding: 'utf-8', string: mask(i.request.body) } } : {}),
    },
    ...(i.response
      ? {
          response: {
            status: { code: String(i.response.status), message: i.response.statusText },
            headers: Object.fromEntries(Object.entries(i.response.headers).map(([k, v]) => [k, [v]])),
            body: { encoding: 'utf-8', string: i.response.text },
            http_version: '1.1',
          },
        }
      : { error: i.error }),
  };
}
