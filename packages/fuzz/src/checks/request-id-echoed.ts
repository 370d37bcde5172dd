/**
 * @module request_id_echoed: every response carries X-Request-Id, and a caller's own id (printable ASCII,
 * 1 to 200 characters, the server's rule for a safe value) comes back unchanged.
 */
import type { CheckFn } from './types.ts';

const ECHOABLE = /^[\x20-\x7e]{1,200}$/;

export const requestIdEchoed: CheckFn = ({ request, response }) => {
  const got = response.headers['x-request-id'];
  if (!got) return 'Missing X-Request-Id response header';
  const sent = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-request-id')?.[1];
  if (sent !== undefined && ECHOABLE.test(sent) && got !== sent) return `X-Request-Id not echoed: sent ${JSON.stringify(sent)}, got ${JSON.stringify(got)}`;
  return undefined;
};
