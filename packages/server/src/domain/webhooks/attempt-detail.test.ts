/**
 * The delivery log's copy of an attempt: headers with shortened signatures, and the start of an answer
 * read with a fixed bound whatever the receiver sends.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ANSWER_LIMIT_BYTES, DRAIN_LIMIT_BYTES, readAnswerStart, shownHeaders } from './attempt-detail.ts';

/** A 1 MiB answer produced chunk by chunk, only as it is read; counts what was pulled out of it. */
function megabyteAnswer(chunkBytes = 16 * 1024) {
  let produced = 0;
  const total = 1024 * 1024;
  const stream = new Readable({
    highWaterMark: chunkBytes,
    read() {
      if (produced >= total) return this.push(null);
      produced += chunkBytes;
      this.push(Buffer.alloc(chunkBytes, 0x61));
    },
  });
  return {
    stream,
    get produced() {
      return produced;
    },
  };
}

describe('readAnswerStart', () => {
  it('keeps the first 2 KiB of a 1 MiB answer, marks it truncated, and stops reading after the drain bound', async () => {
    const answer = megabyteAnswer();
    const start = await readAnswerStart(answer.stream);
    expect(start).toEqual({ body: 'a'.repeat(ANSWER_LIMIT_BYTES), truncated: true });
    // The rest is drained in the background, then the answer is closed.
    if (!answer.stream.closed) await new Promise<void>((resolve) => answer.stream.once('close', () => resolve()));
    expect(answer.stream.destroyed).toBe(true);
    // Read to free the connection, at most the drain bound (and the chunk in flight): never the whole megabyte.
    expect(answer.produced).toBeLessThanOrEqual(DRAIN_LIMIT_BYTES + 2 * 16 * 1024);
    expect(answer.produced).toBeLessThan(1024 * 1024);
  });

  it('keeps a short answer whole; an empty one is an empty string', async () => {
    expect(await readAnswerStart(Readable.from([Buffer.from('{"ok":'), Buffer.from('true}')]))).toEqual({ body: '{"ok":true}', truncated: false });
    expect(await readAnswerStart(Readable.from([]))).toEqual({ body: '', truncated: false });
  });

  it('an answer of exactly the limit is not truncated; one byte more is', async () => {
    expect(await readAnswerStart(Readable.from([Buffer.alloc(ANSWER_LIMIT_BYTES, 0x62)]))).toEqual({ body: 'b'.repeat(ANSWER_LIMIT_BYTES), truncated: false });
    expect(await readAnswerStart(Readable.from([Buffer.alloc(ANSWER_LIMIT_BYTES + 1, 0x62)]))).toEqual({
      body: 'b'.repeat(ANSWER_LIMIT_BYTES),
      truncated: true,
    });
  });

  it('replaces invalid UTF-8, and a character cut at the limit, with U+FFFD', async () => {
    const invalid = Buffer.from([0xff, 0x6f, 0x6b, 0xc3]);
    expect(await readAnswerStart(Readable.from([invalid]))).toEqual({ body: '\uFFFDok\uFFFD', truncated: false });
    // 2,047 ASCII bytes then "é" (2 bytes): only its first byte fits.
    const cut = Buffer.concat([Buffer.alloc(ANSWER_LIMIT_BYTES - 1, 0x63), Buffer.from('é'), Buffer.from('more')]);
    expect(await readAnswerStart(Readable.from([cut]))).toEqual({ body: `${'c'.repeat(ANSWER_LIMIT_BYTES - 1)}\uFFFD`, truncated: true });
  });

  it('waits a bounded time for an answer that never ends: what came, truncated, and the answer closed', async () => {
    const slow = new Readable({ read() {} });
    slow.push(Buffer.from('partial'));
    const start = await readAnswerStart(slow, { waitMs: 50 });
    expect(start).toEqual({ body: 'partial', truncated: true });
    expect(slow.destroyed).toBe(true);
  });
});

describe('shownHeaders', () => {
  it('keeps names and order, shortens every signature to 12 characters', () => {
    const hex = 'a'.repeat(64);
    const v1 = `v1,${'B'.repeat(43)}=`;
    const v1old = `v1,${'C'.repeat(43)}=`;
    expect(
      shownHeaders({
        'Content-Type': 'application/json',
        'X-SERVICE-Signature': hex,
        'X-SERVICE-Timestamp': '1795158846',
        'webhook-signature': `${v1} ${v1old}`,
      }),
    ).toEqual([
      { name: 'Content-Type', value: 'application/json' },
      { name: 'X-SERVICE-Signature', value: `${'a'.repeat(12)}…` },
      { name: 'X-SERVICE-Timestamp', value: '1795158846' },
      { name: 'webhook-signature', value: `v1,${'B'.repeat(12)}… v1,${'C'.repeat(12)}…` },
    ]);
  });
});
