/** @module not_a_server_error: no response may be a 5xx. */
import type { CheckFn } from './types.ts';

export const notAServerError: CheckFn = ({ response }) =>
  response.status >= 500 ? `Server error: ${response.status}${response.text ? ` ${snippet(response.text)}` : ''}` : undefined;

export function snippet(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
