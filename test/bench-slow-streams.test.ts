/**
 * @module The benchmark's many-long-streams client counts what each stream received against what the
 * loopback model server sent: straight from that server every fragment arrives, and through a path
 * that drops one fragment of each stream the loss is reported, per fragment and per stream, and a
 * stream that ends early is reported cut. Real
 * processes on loopback: the model server from scripts/bench, and a lossy proxy in this process.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, startUpstream } from '../scripts/bench/processes.ts';
import { slowStreams } from '../scripts/bench/slow-streams.ts';

// 50 ms to the first fragment, then 40 a second for 0.25 s: 10 fragments a stream.
const SLOW = { firstMs: 50, rate: 40, seconds: 0.25 };
const body = JSON.stringify({ model: 'bench-slow', stream: true, messages: [{ role: 'user', content: 'Hello' }] });

let upstream: Listening;
let lossy: Server;
let lossyUrl: string;

beforeAll(async () => {
  upstream = await startUpstream(SLOW);
  // Buffers the model server's answer and forwards part of it.
  lossy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(`${upstream.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    const text = await answer.text();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
    // /drop: without fragment 3's event; /cut: up to fragment 5, then the connection ends without [DONE].
    if (req.url === '/drop') res.end(text.replace(/data: [^\n]*tok3\.[^\n]*\n\n/, ''));
    else res.end(text.slice(0, text.indexOf('\n\n', text.indexOf('tok5.')) + 2));
  });
  await new Promise<void>((resolve) => lossy.listen(0, '127.0.0.1', resolve));
  lossyUrl = `http://127.0.0.1:${(lossy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => lossy?.close(resolve));
  await upstream?.stop();
});

const run = (path: string, url: string, count: number) =>
  slowStreams({ path, url, headers: {}, body, count, rampSeconds: 0.1, server: upstream, upstream, limitMs: 20_000 });

describe('slow streams', () => {
  it('straight from the model server: every stream complete, nothing lost, and the server read from /proc', async () => {
    const result = await run('upstream', `${upstream.url}/v1/chat/completions`, 5);
    expect(result).toMatchObject({
      path: 'upstream',
      streams: 5,
      complete: 5,
      failed: 0,
      fragmentsPerStream: 10,
      upstreamSent: 50,
      received: 50,
      lost: 0,
      undelivered: 0,
      outOfOrder: 0,
    });
    expect(Number.isFinite(result.firstFragmentP50Ms)).toBe(true);
    expect(result.rssPeakBytes).toBeGreaterThan(0);
    expect(result.cpuSeconds).not.toBeNull();
  });

  it('through a path that drops fragment 3: one fragment lost per stream, and no stream complete', async () => {
    const result = await run('lossy', `${lossyUrl}/drop`, 3);
    expect(result).toMatchObject({
      streams: 3,
      complete: 0,
      failed: 3,
      short: 3,
      cut: 0,
      upstreamSent: 30,
      received: 27,
      lost: 3,
      undelivered: 3,
      outOfOrder: 0,
    });
  });

  it('through a path that ends each stream after fragment 5 without [DONE]: the streams are cut, nothing counted as silently lost', async () => {
    const result = await run('cut', `${lossyUrl}/cut`, 3);
    expect(result).toMatchObject({ streams: 3, complete: 0, failed: 3, cut: 3, short: 0, received: 15, lost: 0, undelivered: 15 });
  });
});
