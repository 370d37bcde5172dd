/**
 * @module The start of a run's request (`Run.requestPreview`): what the runs list shows of what each run
 * was asked. The last `user` message of the invocation's new messages, whitespace folded, at most
 * `REQUEST_PREVIEW_CHARS` characters (code points, as the contract's `maxLength` counts them).
 */
import type { EngineMessage } from '../../engine/index.ts';

export const REQUEST_PREVIEW_CHARS = 160;
/** How much of a message is read: a message may hold 500,000 characters; a preview needs the first few. */
const SCAN_UNITS = 4096;
const CUT = '…';

/** The preview of `messages`, or null when none of them is a `user` message (or it is blank). */
export function requestPreview(messages: readonly EngineMessage[]): string | null {
  const last = messages.findLast((message) => message.role === 'user');
  if (!last) return null;
  const text = last.content.trimStart();
  let head = text.slice(0, SCAN_UNITS);
  // Never end on half of a surrogate pair that the slice split.
  const end = head.charCodeAt(head.length - 1);
  if (end >= 0xd800 && end <= 0xdbff) head = head.slice(0, -1);
  const folded = head.replace(/\s+/g, ' ').trim();
  if (folded === '') return null;
  const points = Array.from(folded);
  const cut = text.length > head.length || points.length > REQUEST_PREVIEW_CHARS;
  if (!cut) return folded;
  return (
    points
      .slice(0, REQUEST_PREVIEW_CHARS - 1)
      .join('')
      .trimEnd() + CUT
  );
}
