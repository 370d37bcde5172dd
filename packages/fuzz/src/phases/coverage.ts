/**
 * @module The coverage phase: deterministic cases around every constraint: values at each boundary (valid),
 * just past it and otherwise broken (invalid), each required parameter or header left out, a missing or
 * non-JSON body, requests without or with bogus credentials, and undocumented methods on each path.
 */
import type { Case } from '../case.ts';
import { requiresAuth } from '../auth.ts';
import { HTTP_METHODS, type Operation } from '../contract/operations.ts';
import { listMutations, NON_JSON_BODIES } from '../negative/mutate.ts';
import { boundaryValues, replaceAt, schemaNodes } from '../schema/boundaries.ts';
import { bagOf, bodyMedia, bodyValid, generatedParameters, isValidCase, parameterValid, type Generator } from './generate.ts';

const PER_PARAMETER = 8;
const PER_BODY = 60;

export function coverageCases(op: Operation, base: Case, g: Generator): Case[] {
  const out: Case[] = [];
  const variant = (patch: Partial<Case>): Case => ({
    ...base,
    phase: 'coverage',
    path: { ...base.path },
    query: { ...base.query },
    headers: { ...base.headers },
    cookies: { ...base.cookies },
    ...patch,
  });

  // Credentials: none at all, then bogus ones (ignored_auth).
  if (requiresAuth(op)) {
    out.push(variant({ kind: 'negative', withoutAuth: true, description: 'request without credentials' }));
    const bogus = variant({ kind: 'negative', withoutAuth: true, description: 'request with invalid credentials' });
    bogus.headers.Authorization = 'Bearer service_sk_live_AAAAAAAAAAAAAAAAAAAAAAAA';
    bogus.cookies.service_session = 'invalid-session';
    out.push(bogus);
  }

  for (const p of generatedParameters(op)) {
    const current = bagOf(base, p.in)[p.name];
    if (p.required && p.in !== 'path') {
      const c = variant({ kind: 'negative', description: `Missing required ${p.in} parameter ${p.name}` });
      delete bagOf(c, p.in)[p.name];
      if (p.in === 'header') c.missingHeader = p.name;
      c.pinned = [p.name];
      out.push(c);
    }
    for (const value of boundaryValues(p.schema, g.doc, current).slice(0, PER_PARAMETER)) {
      const c = variant({ kind: 'positive', description: `${p.in} parameter ${p.name} at boundary ${short(value)}` });
      bagOf(c, p.in)[p.name] = value;
      if (parameterValid(p, value, g) && value !== undefined) out.push(c);
    }
    if (current !== undefined) {
      const mutations = listMutations(p.schema, current, { root: g.doc, location: p.in, stillValid: (v) => parameterValid(p, v, g) }, PER_PARAMETER);
      for (const m of mutations) {
        const c = variant({
          kind: 'negative',
          description: `${p.in} parameter ${p.name}${m.description === '/: ' ? '' : ` ${m.description}`}`,
          pinned: [p.name],
        });
        bagOf(c, p.in)[p.name] = m.value;
        out.push(c);
      }
    }
  }

  const media = bodyMedia(op);
  if (media && base.body && 'value' in base.body) {
    const value = base.body.value;
    let boundaries = 0;
    for (const node of schemaNodes(media.schema, value, g.doc)) {
      for (const b of boundaryValues(node.schema, g.doc, node.value)) {
        if (boundaries >= PER_BODY) break;
        const replaced = replaceAt(value, node.path, b);
        if (!bodyValid(media.schema, replaced, g)) continue;
        boundaries++;
        out.push(
          variant({ kind: 'positive', description: `body /${node.path.join('/')} at boundary ${short(b)}`, body: { mediaType: media.type, value: replaced } }),
        );
      }
    }
    for (const m of listMutations(media.schema, value, { root: g.doc, stillValid: (v) => bodyValid(media.schema, v, g) }, PER_BODY)) {
      out.push(variant({ kind: 'negative', description: `body${m.description}`, body: { mediaType: media.type, value: m.value } }));
    }
    for (const raw of NON_JSON_BODIES.slice(0, 3))
      out.push(variant({ kind: 'negative', description: `body is not JSON: ${JSON.stringify(raw)}`, body: { mediaType: media.type, raw } }));
    if (op.requestBody?.required) out.push(variant({ kind: 'negative', description: 'required body missing', body: undefined }));
  }
  // A boundary case must still be valid as a whole (another part may depend on it).
  return out.filter((c) => c.kind === 'negative' || isValidCase(c, g));
}

/** One case per method the path does not document (GET, PUT, POST, PATCH, DELETE), sent with `base`'s data. */
export function unsupportedMethodCases(ops: readonly Operation[], base: Case): Case[] {
  const documented = new Set(ops.filter((o) => o.path === base.operation.path).map((o) => o.method));
  return HTTP_METHODS.filter((m) => ['get', 'put', 'post', 'patch', 'delete'].includes(m) && !documented.has(m)).map((m) => ({
    ...base,
    phase: 'coverage',
    kind: 'negative',
    method: m.toUpperCase(),
    description: `undocumented method ${m.toUpperCase()} ${base.operation.path}`,
  }));
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}… (${text.length} chars)` : text;
}
