/**
 * @module request_id_echoed: every response carries X-Request-Id, and a caller's own id comes back unchanged
 * when it is acceptable: valid against the operation's documented `X-Request-Id` parameter, or (undocumented)
 * 1 to 200 printable ASCII characters. HTTP trims surrounding whitespace, so the trimmed value is what counts.
 */
import type { CheckFn } from './types.ts';

const ECHOABLE = /^[\x20-\x7e]{1,200}$/;

export const requestIdEchoed: CheckFn = ({ request, response, operation, validator }) => {
  const got = response.headers['x-request-id'];
  if (!got) return 'Missing X-Request-Id response header';
  const raw = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-request-id')?.[1];
  const sent = raw?.trim();
  if (!sent) return undefined;
  const documented = operation.parameters.find((p) => p.in === 'header' && p.name.toLowerCase() === 'x-request-id');
  const acceptable = documented ? validator.isValid(documented.schema, sent) : ECHOABLE.test(sent);
  if (acceptable && got !== sent) return `X-Request-Id not echoed: sent ${JSON.stringify(sent)}, got ${JSON.stringify(got)}`;
  return undefined;
};
