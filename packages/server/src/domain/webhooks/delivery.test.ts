import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyResponseStatus, deliverWebhook, type DeliveryOptions, type DeliveryRequest } from './delivery.ts';
import { createDeliveryAgents, type DeliveryAgents } from './delivery-agents.ts';
import { buildPingEnvelope, serializeEnvelope } from './envelope.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type ReceiverAnswer, type TestCertificate } from '@service/testing/https-receiver';

const SECRET = 'whsec_0123456789ABCDEFGHIJabcdefghijKL';
const ROTATED = 'whsec_Rotated0123456789ABCDEFGHIJabcde';
const NOW = Date.UTC(2026, 10, 22, 6, 0, 0);
const envelope = buildPingEnvelope({ tenantId: 'wksp_0123456789abcdef', destinationId: 'dst_0123456789abcdef' });
const BODY = serializeEnvelope(envelope);

let certificate: TestCertificate;
beforeAll(() => {
  certificate = createSelfSignedCertificate(['receiver.test']);
});

/** Run `fn` against a fresh receiver answering `answer`, and close it afterwards. */
async function withReceiver<T>(
  answer: ReceiverAnswer | ((n: number) => ReceiverAnswer),
  fn: (receiver: Awaited<ReturnType<typeof startHttpsTestReceiver>>) => Promise<T>,
): Promise<T> {
  let n = 0;
  const receiver = await startHttpsTestReceiver(certificate, () => (typeof answer === 'function' ? answer(n++) : answer));
  try {
    return await fn(receiver);
  } finally {
    await receiver.close();
  }
}

function request(url: string): DeliveryRequest {
  return { url, secret: SECRET, body: BODY, eventId: envelope.id, eventType: envelope.type };
}

function options(ca: string, extra: Partial<DeliveryOptions> = {}): DeliveryOptions {
  return { policy: { allowList: ['127.0.0.1/32'] }, now: () => NOW, ca, ...extra };
}

describe('deliverWebhook over real HTTPS', () => {
  it('posts the exact body, signed, with the five spec headers, and reports delivered', async () => {
    await withReceiver({ status: 204 }, async (receiver) => {
      const outcome = await deliverWebhook(request(`${receiver.origin}/hooks/in?x=1`), options(receiver.ca));
      expect(outcome).toMatchObject({ result: 'delivered', status: 204, answer: { body: '', truncated: false } });
      // The log's copy of the headers: the names as sent, the signatures shortened to 12 characters.
      expect(outcome.sentHeaders?.map((h) => h.name)).toEqual([
        'Content-Type',
        'X-SERVICE-Signature',
        'X-SERVICE-Timestamp',
        'X-SERVICE-Event-Id',
        'X-SERVICE-Event-Type',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'Content-Length',
        'User-Agent',
      ]);
      const shown = Object.fromEntries(outcome.sentHeaders!.map((h) => [h.name, h.value]));
      expect(shown['X-SERVICE-Signature']).toBe(`${createHmac('sha256', SECRET).update(BODY).digest('hex').slice(0, 12)}…`);
      expect(shown['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{12}…$/);
      expect(JSON.stringify(outcome)).not.toContain(SECRET);
      expect(receiver.received).toHaveLength(1);
      const [got] = receiver.received;
      expect(got!.method).toBe('POST');
      expect(got!.path).toBe('/hooks/in?x=1');
      expect(Buffer.compare(got!.body, Buffer.from(BODY))).toBe(0);
      expect(got!.headers['content-type']).toBe('application/json');
      expect(got!.headers['x-service-signature']).toBe(createHmac('sha256', SECRET).update(BODY).digest('hex'));
      expect(got!.headers['x-service-timestamp']).toBe(String(NOW / 1000));
      expect(got!.headers['x-service-event-id']).toBe(envelope.id);
      expect(got!.headers['x-service-event-type']).toBe('ping');
      expect(got!.headers['webhook-id']).toBe(envelope.id);
      expect(got!.headers['webhook-timestamp']).toBe(String(NOW / 1000));
      const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
      const signed = createHmac('sha256', key)
        .update(`${envelope.id}.${NOW / 1000}.${Buffer.from(BODY).toString()}`)
        .digest('base64');
      expect(got!.headers['webhook-signature']).toBe(`v1,${signed}`);
    });
  });

  const statuses: [number, string][] = [
    [200, 'delivered'],
    [299, 'delivered'],
    [500, 'retry'],
    [503, 'retry'],
    [408, 'retry'],
    [429, 'retry'],
    [400, 'retry'],
    [401, 'retry'],
    [404, 'retry'],
    [410, 'give_up'],
  ];
  it.each(statuses)('classifies a %i answer as %s', async (status, result) => {
    await withReceiver({ status }, async (receiver) => {
      const outcome = await deliverWebhook(request(`${receiver.origin}/`), options(receiver.ca));
      expect(outcome).toMatchObject({ result, status });
      expect(receiver.received).toHaveLength(1);
    });
  });

  it('does not follow a redirect (it could point inside) and retries instead', async () => {
    await withReceiver({ status: 302, headers: { Location: 'https://169.254.169.254/' } }, async (receiver) => {
      expect(await deliverWebhook(request(`${receiver.origin}/`), options(receiver.ca))).toMatchObject({ result: 'retry', reason: 'http_status', status: 302 });
      expect(receiver.received).toHaveLength(1);
    });
  });

  it('gives a receiver that never answers a timeout, then retries', async () => {
    await withReceiver('hang', async (receiver) => {
      // The timeout covers the TLS handshake too: 2 s leaves a loaded machine time to hand the request over before the
      // deadline (300 ms did not, once, in a full suite on 2 busy cores).
      const outcome = await deliverWebhook(request(`${receiver.origin}/`), options(receiver.ca, { timeoutMs: 2_000 }));
      expect(outcome).toMatchObject({ result: 'retry', reason: 'timeout' });
      expect(receiver.received).toHaveLength(1);
    });
  });

  it('retries an unreachable endpoint (connection refused)', async () => {
    const port = await closedPort();
    const outcome = await deliverWebhook(request(`https://127.0.0.1:${port}/`), options(certificate.cert));
    expect(outcome).toMatchObject({ result: 'retry', reason: 'network_error', detail: 'ECONNREFUSED' });
  });

  it('never turns certificate verification off: an untrusted certificate is a network error', async () => {
    await withReceiver({ status: 200 }, async (receiver) => {
      const outcome = await deliverWebhook(request(`${receiver.origin}/`), { policy: { allowList: ['127.0.0.1/32'] }, now: () => NOW });
      expect(outcome).toMatchObject({ result: 'retry', reason: 'network_error' });
      expect(receiver.received).toHaveLength(0);
    });
  });

  it('refuses a loopback receiver that is not on the allow-list, without connecting', async () => {
    await withReceiver({ status: 200 }, async (receiver) => {
      const outcome = await deliverWebhook(request(`${receiver.origin}/`), options(receiver.ca, { policy: {} }));
      expect(outcome).toMatchObject({ result: 'give_up', reason: 'refused_destination', detail: 'blocked_address' });
      expect(receiver.received).toHaveLength(0);
    });
  });

  it('never delivers to http://, allow-list or not', async () => {
    await withReceiver({ status: 200 }, async (receiver) => {
      const outcome = await deliverWebhook(request(`http://127.0.0.1:${receiver.port}/`), options(receiver.ca));
      expect(outcome).toMatchObject({ result: 'give_up', reason: 'refused_destination', detail: 'not_https' });
      expect(receiver.received).toHaveLength(0);
    });
  });

  it('connects to the address it checked: the pinned lookup serves a name the system cannot resolve', async () => {
    await withReceiver({ status: 200 }, async (receiver) => {
      // First answer allow-listed loopback, then (a rebind) a private address: only the first is ever used.
      const answers = [['127.0.0.1'], ['10.0.0.9']];
      let calls = 0;
      const resolveAll = async () => (answers[Math.min(calls++, 1)] ?? []).map((address) => ({ address, family: 4 }));
      const outcome = await deliverWebhook(
        request(`https://receiver.test:${receiver.port}/in`),
        options(receiver.ca, { policy: { allowList: ['127.0.0.1/32'], resolveAll } }),
      );
      expect(outcome).toMatchObject({ result: 'delivered', status: 200 });
      expect(calls).toBe(1);
      expect(receiver.received[0]!.headers.host).toBe(`receiver.test:${receiver.port}`);
    });
  });

  it('retries, without connecting, when the name now resolves to a refused address', async () => {
    await withReceiver({ status: 200 }, async (receiver) => {
      const resolveAll = async () => [{ address: '10.0.0.9', family: 4 }];
      const outcome = await deliverWebhook(
        request(`https://receiver.test:${receiver.port}/in`),
        options(receiver.ca, { policy: { allowList: ['127.0.0.1/32'], resolveAll } }),
      );
      expect(outcome).toMatchObject({ result: 'retry', reason: 'refused_destination', detail: 'blocked_address' });
      expect(receiver.received).toHaveLength(0);
    });
  });

  it('counts name resolution against the timeout', async () => {
    const resolveAll = () => new Promise<never>(() => undefined); // a resolver that never answers
    const outcome = await deliverWebhook(request('https://slow-dns.example.com/'), options(certificate.cert, { policy: { resolveAll }, timeoutMs: 200 }));
    expect(outcome).toMatchObject({ result: 'retry', reason: 'timeout' });
  });

  it('retries a name that does not resolve', async () => {
    const resolveAll = async () => {
      throw Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const outcome = await deliverWebhook(request('https://gone.example.com/'), options(certificate.cert, { policy: { resolveAll } }));
    expect(outcome).toMatchObject({ result: 'retry', reason: 'dns_failed', detail: 'dns_failed' });
  });

  it('signs each attempt with the secret and clock it is given (rotation, fresh timestamp)', async () => {
    await withReceiver({ status: 500 }, async (receiver) => {
      await deliverWebhook(request(`${receiver.origin}/`), options(receiver.ca));
      await deliverWebhook({ ...request(`${receiver.origin}/`), secret: ROTATED }, options(receiver.ca, { now: () => NOW + 30_000 }));
      const [first, second] = receiver.received;
      expect(second!.headers['x-service-signature']).toBe(createHmac('sha256', ROTATED).update(BODY).digest('hex'));
      expect(second!.headers['x-service-signature']).not.toBe(first!.headers['x-service-signature']);
      expect(Number(second!.headers['x-service-timestamp']) - Number(first!.headers['x-service-timestamp'])).toBe(30);
      expect(Buffer.compare(first!.body, second!.body)).toBe(0);
    });
  });
});

describe('kept-alive connections (delivery-agents.ts)', () => {
  // One pool per test, as the worker holds one for all its attempts.
  let agents: DeliveryAgents;
  beforeEach(() => {
    agents = createDeliveryAgents();
  });

  it('sends later attempts to one destination on the connection the first opened', async () => {
    await withReceiver({ status: 200, body: 'ok' }, async (receiver) => {
      for (let i = 0; i < 5; i += 1)
        expect(await deliverWebhook(request(`${receiver.origin}/in`), options(receiver.ca, { agents }))).toMatchObject({ result: 'delivered' });
      expect(receiver.received.map((r) => r.earlierOnConnection)).toEqual([0, 1, 2, 3, 4]);
      expect(receiver.connections).toBe(1);
    });
  });

  it('never shares a connection between two host names, even on one address: each is its own TLS name', async () => {
    const twoNames = createSelfSignedCertificate(['a.receiver.test', 'b.receiver.test']);
    const receiver = await startHttpsTestReceiver(twoNames);
    try {
      const resolveAll = async () => [{ address: '127.0.0.1', family: 4 }];
      for (const name of ['a', 'b', 'a', 'b']) {
        const outcome = await deliverWebhook(
          request(`https://${name}.receiver.test:${receiver.port}/in`),
          options(receiver.ca, { agents, policy: { allowList: ['127.0.0.1/32'], resolveAll } }),
        );
        expect(outcome).toMatchObject({ result: 'delivered' });
      }
      expect(receiver.received.map((r) => [r.servername, r.connection])).toEqual([
        ['a.receiver.test', 1],
        ['b.receiver.test', 2],
        ['a.receiver.test', 1],
        ['b.receiver.test', 2],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('sends again on a new connection when the receiver closed the kept one (its keep-alive ran out)', async () => {
    // The second request on a connection is answered by closing it, as a receiver that just timed it out.
    const receiver = await startHttpsTestReceiver(certificate, (got) => (got.earlierOnConnection > 0 ? 'reset' : { status: 200 }));
    try {
      expect(await deliverWebhook(request(`${receiver.origin}/in`), options(receiver.ca, { agents }))).toMatchObject({ result: 'delivered', status: 200 });
      expect(await deliverWebhook(request(`${receiver.origin}/in`), options(receiver.ca, { agents }))).toMatchObject({ result: 'delivered', status: 200 });
      expect(receiver.received.map((r) => [r.connection, r.earlierOnConnection])).toEqual([
        [1, 0],
        [1, 1],
        [2, 0],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('keeps only the start of a long answer and closes its connection instead of reading it all', async () => {
    await withReceiver({ status: 200, body: 'x'.repeat(256 * 1024) }, async (receiver) => {
      const kept = { result: 'delivered', status: 200, answer: { body: 'x'.repeat(2048), truncated: true } };
      expect(await deliverWebhook(request(`${receiver.origin}/in`), options(receiver.ca, { agents }))).toMatchObject(kept);
      expect(await deliverWebhook(request(`${receiver.origin}/in`), options(receiver.ca, { agents }))).toMatchObject(kept);
      expect(receiver.connections).toBe(2);
    });
  });
});

describe('classifyResponseStatus', () => {
  it('treats a redirect or a missing status as a failure to retry', () => {
    expect(classifyResponseStatus(301)).toEqual({ result: 'retry', reason: 'http_status', status: 301 });
    expect(classifyResponseStatus(0)).toEqual({ result: 'retry', reason: 'http_status', status: 0 });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
