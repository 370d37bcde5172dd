/**
 * @module A running server's operator API from the command line. A command that changes a workspace goes
 * through it when it is given the server's address (`--url`, or SERVICE_URL) and the operator token
 * (`--operator-token`, or OPERATOR_TOKEN, which keeps it off the command line); without an address it
 * works on the store directly, which the embedded store allows only while the server is stopped (its
 * lock then says to give `--url`). The address decides, never a guess: a store that is locked is not
 * taken as a sign that some server listens somewhere.
 */
import type { ServerConfig } from '../config.ts';
import { messageOf } from '../caught.ts';
import type { OperatorWorkspace } from '../domain/workspaces/index.ts';
import type { Flags } from './commands.ts';
import { UsageError } from './usage.ts';

/** The flags of a command that can go through the operator API. */
export const OPERATOR_API_OPTIONS = {
  url: { type: 'string' },
  'operator-token': { type: 'string' },
} as const;

/** Their help lines (usage.ts holds them, for the help texts there too). */
export { OPERATOR_API_HELP } from './usage.ts';

/** Calls to one running server's operator API. */
export interface OperatorApi {
  /** `path` relative to the server's address (`operator/workspaces`); a refusal becomes one UsageError line. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** The operator API to go through, when the flags or the environment name a server; else undefined (the store). */
export function operatorApi(values: Flags, config: Pick<ServerConfig, 'serviceUrl' | 'operatorToken'>): OperatorApi | undefined {
  const url = typeof values.url === 'string' ? values.url : config.serviceUrl;
  if (!url) return undefined;
  const token = typeof values['operator-token'] === 'string' ? values['operator-token'] : config.operatorToken;
  // Named by where the server's address came from: SERVICE_URL alone for `webhooks outbound create`, whose --url is the receiver's.
  const from = typeof values.url === 'string' ? '--url' : 'SERVICE_URL';
  if (!token) throw new UsageError(`${from} needs the operator token: OPERATOR_TOKEN (or --operator-token T).`);
  return { call: (method, path, body) => operatorCall(url, token, method, path, body) };
}

/** One call to a running server's operator API; its refusals become a plain UsageError line. */
export async function operatorCall<T>(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch((err: unknown) => {
    throw new UsageError(`Could not reach ${baseUrl}: ${messageOf(err)}`);
  });
  if (res.status === 204) return undefined as T;
  const answer = (await res.json().catch(() => ({}))) as { error?: string; message?: string; requestId?: string };
  if (!res.ok) {
    throw new UsageError(
      `${method} ${path} answered ${res.status} ${answer.error ?? ''}: ${answer.message ?? ''}${answer.requestId ? ` (request ${answer.requestId})` : ''}`,
    );
  }
  return answer as T;
}

/** The workspace named by --workspace, or the only one the server holds (the same rule as on the store). */
export async function operatorWorkspace(api: OperatorApi, requested: string | undefined): Promise<string> {
  if (requested) return requested; // an unknown id: the server answers 404 not_found
  const { data } = await api.call<{ data: OperatorWorkspace[] }>('GET', 'operator/workspaces');
  if (data.length === 0) throw new UsageError('No workspace yet: run `service init` first.');
  if (data.length > 1) throw new UsageError(`Several workspaces exist (${data.map((w) => w.id).join(', ')}): pass --workspace.`);
  return data[0]!.id;
}

/** The path of a workspace's resource in the operator API: `operator/workspaces/<id>/<rest>`. */
export function workspacePath(workspaceId: string, ...rest: string[]): string {
  return ['operator/workspaces', workspaceId, ...rest].map((part, i) => (i === 0 ? part : encodeURIComponent(part))).join('/');
}
