/**
 * @module Test helper: a loopback TCP proxy in front of the real server that cuts the client's connection after a given
 * number of bytes of a response's body, for the requests that match a rule. It forwards bytes as they come (a stream
 * stays a stream) and reads the request heads only to know which response is whose (HTTP/1.1 without pipelining: the
 * bytes from the server after a request's head are that request's answer). A cut closes the client's side only and
 * keeps reading the server's answer to its end, as a network that drops between client and server would: the server
 * never hears of it; unless the rule says `closeServerSide`, when the server's connection closes too (the server sees its
 * client go); or `stall`, when the client's connection stays open and silent (a connection that died without closing).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface CutRule {
  /** Matched against the request line, e.g. `POST /v1/inference HTTP/1.1`. */
  match: RegExp;
  /** Bytes of the response body (as sent: chunked framing included) the client receives before the cut. */
  afterBytes: number;
  /** How many matching answers to cut; default every one. */
  times?: number;
  /** Close the server's connection too at the cut (default: keep reading its answer, the server never knows). */
  closeServerSide?: boolean;
  /** Instead of closing the client's connection at the cut, keep it open and send it nothing more. */
  stall?: boolean;
}

export interface SeenRequest {
  /** `METHOD /path?query`. */
  line: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Bytes of the response body the server sent (counted to the end, cut or not). */
  bodyBytes: number;
  /** Whether the client's connection was cut during this answer. */
  cut: boolean;
}

export interface CuttingProxy {
  url: string;
  seen: SeenRequest[];
  /** Replaces the rules (and forgets what was seen). */
  cut(...rules: CutRule[]): void;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const upstreamUrl = new URL(target);
  let rules: { rule: CutRule; left: number }[] = [];
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    const upstream = connect(Number(upstreamUrl.port), upstreamUrl.hostname);
    sockets.add(client).add(upstream);
    let clientOpen = true;
    // A stalled client's connection outlives the server's: it stays open and silent until the client gives up.
    let stalled = false;
    // The request being answered on this connection, and how its answer is going.
    let current:
      | { request: SeenRequest; cutAfter: number | undefined; closeServerSide: boolean; stall: boolean; head: Buffer | undefined; forwarded: number }
      | undefined;
    let requestHead: Buffer = Buffer.alloc(0);
    let requestBodyLeft = 0;

    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      let rest: Buffer = chunk;
      while (rest.length > 0) {
        if (requestBodyLeft > 0) {
          const taken = Math.min(requestBodyLeft, rest.length);
          requestBodyLeft -= taken;
          rest = rest.subarray(taken);
          continue;
        }
        requestHead = Buffer.concat([requestHead, rest]);
        const end = requestHead.indexOf(HEAD_END);
        if (end < 0) return;
        const [line = '', ...fields] = requestHead.subarray(0, end).toString('latin1').split('\r\n');
        rest = requestHead.subarray(end + 4);
        requestHead = Buffer.alloc(0);
        const headers: Record<string, string> = {};
        for (const field of fields) {
          const colon = field.indexOf(':');
          headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim();
        }
        requestBodyLeft = Number(headers['content-length'] ?? 0);
        const request: SeenRequest = { line: line.replace(/ HTTP\/1\.[01]$/, ''), headers, bodyBytes: 0, cut: false };
        seen.push(request);
        const armed = rules.find((r) => r.left > 0 && r.rule.match.test(line));
        if (armed) armed.left -= 1;
        current = {
          request,
          cutAfter: armed?.rule.afterBytes,
          closeServerSide: armed?.rule.closeServerSide ?? false,
          stall: armed?.rule.stall ?? false,
          head: Buffer.alloc(0),
          forwarded: 0,
        };
      }
    });

    upstream.on('data', (chunk: Buffer) => {
      let body: Buffer = chunk;
      let headPart: Buffer = Buffer.alloc(0);
      if (current?.head !== undefined) {
        const head = Buffer.concat([current.head, chunk]);
        const end = head.indexOf(HEAD_END);
        if (end < 0) {
          current.head = head;
          body = Buffer.alloc(0);
          headPart = chunk;
        } else {
          current.head = undefined;
          headPart = chunk.subarray(0, chunk.length - (head.length - end - 4));
          body = head.subarray(end + 4);
        }
      }
      if (current) current.request.bodyBytes += body.length;
      if (!clientOpen) return;
      if (current?.cutAfter === undefined || !current || current.head !== undefined) {
        client.write(chunk);
        return;
      }
      const room = current.cutAfter - current.forwarded;
      if (body.length < room) {
        client.write(chunk);
        current.forwarded += body.length;
        return;
      }
      // The cut: the head and the allowed bytes, then the client's connection closes; the server's answer is still read.
      clientOpen = false;
      current.request.cut = true;
      const closeServer = current.closeServerSide;
      if (current.stall) {
        // Open and silent: only the client's own timeout ends it (the proxy closes it when it closes).
        stalled = true;
        client.write(Buffer.concat([headPart, body.subarray(0, room)]));
        return;
      }
      client.write(Buffer.concat([headPart, body.subarray(0, room)]), () => {
        client.destroy();
        if (closeServer) upstream.destroy();
      });
    });

    const closeBoth = () => {
      clientOpen = false;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    upstream.on('end', () => {
      if (clientOpen) client.end();
      upstream.destroy();
    });
    client.on('end', () => {
      // The client closed its side: the server's answer is still read to its end (a cut client may have gone).
      if (!clientOpen) return;
      upstream.end();
    });
    client.on('close', () => {
      clientOpen = false;
      sockets.delete(client);
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      if (!stalled) client.destroy();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    cut: (...next) => {
      rules = next.map((rule) => ({ rule, left: rule.times ?? Number.POSITIVE_INFINITY }));
      seen.length = 0;
    },
    close: () =>
      new Promise((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}
