/**
 * @module A curl command that reproduces one request. Known secrets are replaced by shell variables
 * (`$SERVICE_API_KEY`, ...) so reports can be pasted into CI logs and tickets without leaking credentials.
 */
import type { Credentials } from '../auth.ts';
import type { PreparedRequest } from '../case.ts';

/** secret value → shell variable name that holds it. */
export type SecretNames = Map<string, string>;

export function curlCommand(baseUrl: string, req: PreparedRequest, secrets: SecretNames = new Map()): string {
  const parts = ['curl', '-X', req.method];
  for (const [k, v] of Object.entries(req.headers)) parts.push('-H', quote(`${k}: ${v}`, secrets));
  if (req.body !== undefined) parts.push('--data-binary', quote(req.body, secrets));
  parts.push(quote(baseUrl + req.path, secrets));
  return parts.join(' ');
}

/** Single-quoted for POSIX shells, except that secrets become `"$VAR"` so the shell expands them. */
function quote(text: string, secrets: SecretNames): string {
  let out = `'${text.replace(/'/g, `'\\''`)}'`;
  for (const [secret, name] of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(`'"$${name}"'`);
  }
  return out.replace(/^''/, '').replace(/''$/, '') || "''";
}

/** Credentials → the shell variables the CLI reads them from, so commands and cassettes never print secrets. */
export function secretNames(creds: Credentials): SecretNames {
  const out: SecretNames = new Map();
  const put = (secret: unknown, name: string) => {
    if (typeof secret === 'string' && secret.length >= 6) out.set(secret, name);
  };
  put(creds.apiKey, 'SERVICE_API_KEY');
  put(creds.mcpToken, 'SERVICE_MCP_TOKEN');
  put(creds.adminSession?.cookie, 'SERVICE_SESSION_COOKIE');
  put(creds.adminSession?.csrfToken, 'SERVICE_CSRF_TOKEN');
  put(creds.inbound?.secret, 'SERVICE_INBOUND_SECRET');
  return out;
}
