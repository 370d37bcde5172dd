/**
 * @module The fairness scenario's slow bodies, in a process of their own: `count` connections trickling a body to a
 * workspace's inbound slug from one forwarded address (each sends its headers and a few bytes, then one byte a
 * second), each reopened a second after the server answers or closes it. Runs until a line arrives on stdin (or
 * stdin closes), then prints what the connections got as JSON: `{ opened, answered: { <status>: n }, closedWithoutAnswer }`.
 *
 *     tsx scripts/bench/slow-bodies.ts <service URL> <inbound slug> <count>
 */
import { connect, type Socket } from 'node:net';

const [url, slug, countText] = process.argv.slice(2);
const count = Number(countText);
if (!url || !slug || !Number.isInteger(count) || count < 0) {
  console.error('usage: tsx scripts/bench/slow-bodies.ts <service URL> <inbound slug> <count>');
  process.exit(2);
}
const { hostname, port } = new URL(url);
const answered: Record<string, number> = {};
let closedWithoutAnswer = 0;
let opened = 0;
let running = true;
const open = new Set<Socket>();
const head =
  `POST /webhooks/inbound/${slug} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Forwarded-For: 10.250.0.1\r\n` +
  `Content-Type: application/json\r\nX-SERVICE-Signature: ${'0'.repeat(64)}\r\nContent-Length: 65536\r\n\r\n{"a":"`;

function one(): void {
  if (!running) return;
  opened += 1;
  const socket = connect(Number(port), hostname);
  open.add(socket);
  let received = '';
  const trickle = setInterval(() => socket.write('x'), 1_000);
  socket.on('connect', () => socket.write(head));
  socket.on('error', () => {});
  socket.on('data', (d) => {
    received += d.toString();
    // An answer ends this attempt: close and come back.
    if (/\r\n\r\n/.test(received)) socket.destroy();
  });
  socket.on('close', () => {
    clearInterval(trickle);
    open.delete(socket);
    if (!running) return;
    const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
    if (status) answered[status] = (answered[status] ?? 0) + 1;
    else closedWithoutAnswer += 1;
    // The sender comes back after the `Retry-After` of a refusal (1 s): the scenario is about what slow bodies
    // hold, not about the rate of instant retries (a CPU flood of its own, which no admission rule removes).
    setTimeout(one, 1_000);
  });
}

for (let i = 0; i < count; i += 1) one();
const stop = () => {
  if (!running) return;
  running = false;
  for (const socket of open) socket.destroy();
  process.stdout.write(`${JSON.stringify({ opened, answered, closedWithoutAnswer })}\n`, () => process.exit(0));
};
process.stdin.on('data', stop);
process.stdin.on('end', stop);
