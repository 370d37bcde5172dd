/**
 * @module A curl command that reproduces one request. Known secrets are replaced by shell variables
 * (`$SERVICE_API_KEY`, ...) so reports can be pasted into CI logs and tickets without leaking credentials.
 */
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
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join(`'"$${name}"'`);
  }
  return out.replace(/^''/, '').replace(/''$/, '') || "''";
}
