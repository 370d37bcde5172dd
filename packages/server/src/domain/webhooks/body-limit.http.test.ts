import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INBOUND_BODY_BYTES, PayloadTooLargeError, readBodyWithLimit } from './body-limit.ts';

// The cap as a route will use it: Hono over @hono/node-server on loopback, a real socket, a
// chunked upload with no Content-Length, and a count of the bytes the handler actually pulled.
let server: ServerType;
let port: number;
const pulled: number[] = [];

beforeAll(async () => {
  const app = new Hono();
  app.post('/in', async (c) => {
    let count = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        count += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    try {
      const body = await readBodyWithLimit(c.req.raw.body?.pipeThrough(counter), { contentLength: c.req.header('content-length') });
      return c.json({ bytes: body.byteLength }, 200);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) return c.json({ error: error.code }, 413);
      throw error;
    } finally {
      pulled.push(count);
    }
  });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** POST `total` bytes in 64 KiB chunks; stop writing as soon as the response arrives. */
function upload(total: number, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/in', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let answered = false;
    req.on('response', () => {
      answered = true;
    });
    // Once the server has answered, a reset of our unfinished upload is expected, not a failure.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe('readBodyWithLimit behind Hono on a real socket', () => {
  it('reads a body under the cap', async () => {
    expect(await upload(256 * 1024)).toEqual({ status: 200, body: JSON.stringify({ bytes: 256 * 1024 }) });
  });

  it('answers 413 to a chunked 8 MiB upload after pulling little more than the cap', async () => {
    pulled.length = 0;
    const answer = await upload(8 * 1024 * 1024);
    expect(answer).toEqual({ status: 413, body: JSON.stringify({ error: 'payload_too_large' }) });
    expect(pulled[0]).toBeGreaterThan(MAX_INBOUND_BODY_BYTES);
    expect(pulled[0]).toBeLessThan(2 * MAX_INBOUND_BODY_BYTES);
  });

  it('answers 413 on a declared Content-Length over the cap without pulling the body', async () => {
    pulled.length = 0;
    const total = MAX_INBOUND_BODY_BYTES + 64 * 1024;
    const answer = await upload(total, { 'Content-Length': String(total) });
    expect(answer.status).toBe(413);
    expect(pulled[0]).toBe(0);
  });
});
