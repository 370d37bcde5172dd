/**
 * @module What the delivery log keeps of one attempt besides its outcome: the headers it sent, by name
 * as the contract spells them, with every signature shortened (never whole, never the secret), and the
 * start of the receiver's answer, read with a fixed bound: at most {@link ANSWER_LIMIT_BYTES} + 1 bytes
 * are kept, whatever the receiver sends, and the rest is read only to free the connection (at most
 * {@link DRAIN_LIMIT_BYTES}) and dropped.
 */
import type { Readable } from 'node:stream';

/** The bytes of a receiver's answer the log keeps (the contract's `responseBody` limit). */
export const ANSWER_LIMIT_BYTES = 2048;

/** How long the answer's start is waited for after the status line. */
export const ANSWER_WAIT_MS = 2_000;

/** Bytes of an answer read in all (kept or dropped) so that its connection can serve again; past it, closed. */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Characters of a signature shown (`9f2c6a41d0b8…`): enough to match a receiver's log, not to reuse it. */
const SIGNATURE_SHOWN = 12;

/** One header an attempt sent (the contract's `DeliveryHeader`). */
export interface SentHeader {
  name: string;
  value: string;
}

/** The start of a receiver's answer. */
export interface AnswerStart {
  /** At most {@link ANSWER_LIMIT_BYTES} bytes, decoded as UTF-8 (invalid sequences become U+FFFD). */
  body: string;
  /** The answer was longer, or did not end in time. */
  truncated: boolean;
}

const shorten = (value: string) => (value.length > SIGNATURE_SHOWN ? `${value.slice(0, SIGNATURE_SHOWN)}…` : value);

/** The headers that carry a signature: the log shows their start only. */
const SIGNATURE_HEADERS = new Set(['x-service-signature', 'webhook-signature']);

/**
 * The shortened signatures of logged headers. They are an HMAC's characters, not engine output: one in a few hundred
 * starts with a run the redactor takes for a model's name ("qwq"), and the log must still show what the receiver got,
 * so the delivery log's answer keeps them as they are (routes/webhook-destinations.ts).
 */
export function shownSignatures(headers: readonly SentHeader[]): string[] {
  return headers.filter((h) => SIGNATURE_HEADERS.has(h.name.toLowerCase())).map((h) => h.value);
}

/** The headers as the log shows them, in the order sent; signatures shortened. */
export function shownHeaders(headers: Record<string, string>): SentHeader[] {
  return Object.entries(headers).map(([name, value]) => {
    const lower = name.toLowerCase();
    if (lower === 'webhook-signature') {
      // Standard Webhooks: space-separated entries, each `v1,<signature>` shortened after its version.
      const shown = value.split(' ').map((entry) => (entry.startsWith('v1,') ? `v1,${shorten(entry.slice(3))}` : shorten(entry)));
      return { name, value: shown.join(' ') };
    }
    return { name, value: SIGNATURE_HEADERS.has(lower) ? shorten(value) : value };
  });
}

/**
 * Reads the start of an answer body: resolves once the answer ended, once more than `limit` bytes
 * came (truncated), or after `waitMs` (truncated; the answer is closed). It keeps one buffer of
 * `limit + 1` bytes and copies into it only what fits; the rest is read and dropped until
 * `drainBytes` in all, then the answer is closed, so a receiver sending a megabyte costs at most
 * that much reading and `limit + 1` bytes of memory.
 */
export function readAnswerStart(answer: Readable, options: { limit?: number; waitMs?: number; drainBytes?: number } = {}): Promise<AnswerStart> {
  const limit = options.limit ?? ANSWER_LIMIT_BYTES;
  const drainBytes = Math.max(limit + 1, options.drainBytes ?? DRAIN_LIMIT_BYTES);
  const kept = Buffer.alloc(limit + 1);
  let keptBytes = 0;
  let readBytes = 0;
  return new Promise<AnswerStart>((resolve) => {
    let settled = false;
    const settle = (truncated: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ body: new TextDecoder('utf-8').decode(kept.subarray(0, Math.min(keptBytes, limit))), truncated: truncated || keptBytes > limit });
    };
    const timer = setTimeout(() => {
      settle(true);
      answer.destroy();
    }, options.waitMs ?? ANSWER_WAIT_MS);
    answer.on('data', (chunk: Buffer) => {
      readBytes += chunk.byteLength;
      if (keptBytes <= limit) {
        const take = Math.min(chunk.byteLength, limit + 1 - keptBytes);
        chunk.copy(kept, keptBytes, 0, take);
        keptBytes += take;
        if (keptBytes > limit) settle(true);
      }
      if (readBytes > drainBytes) answer.destroy();
    });
    answer.on('end', () => settle(false));
    answer.on('close', () => {
      clearTimeout(timer);
      settle(true);
    });
    answer.on('error', () => {});
  });
}
