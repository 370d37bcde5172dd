/**
 * @module A run that streams as slowly as the test says: an invocation of Finance on `Symphony`, whose engine is the
 * harness's fake Chat Completions server, held open until the test sends each fragment and then the end. (Addressed
 * to the department: on a real model the orchestrator delegates, and its text waits until a department answered.) And a count of the
 * requests a page makes about one run, to tell following from polling.
 */
import type { ServerResponse } from 'node:http';
import type { Page, Request } from 'playwright-core';
import { openStream } from '@service/testing/fake-chat-server';
import type { Harness } from './harness.ts';

export interface PacedRun {
  runId: string;
  /** The engine sends the next fragment of the answer. */
  fragment(text: string): void;
  /** The engine sends its usage and ends; resolves when the invocation's own stream has ended too. */
  finish(): Promise<void>;
}

export async function startPacedRun(h: Pick<Harness, 'url' | 'apiKey' | 'chat'>, message: string): Promise<PacedRun> {
  let answer: ReturnType<typeof openStream> | undefined;
  const reached = new Promise<void>((resolve) => {
    h.chat.handle = (request, res: ServerResponse) => {
      answer = openStream(res, String(request.body.model));
      resolve();
    };
  });
  // Not awaited alone: the server may hold its answer's headers until the engine's first fragment.
  const invocation = fetch(`${h.url}/v1/inference`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ alias: 'Symphony', agentSlug: 'finance', stream: true, messages: [{ role: 'user', content: message }] }),
  });
  const refused = invocation.then(async (response) => {
    if (response.status !== 200) throw new Error(`the invocation answered ${response.status}: ${await response.text()}`);
    return reached;
  });
  await Promise.race([reached, refused]);
  const runId = await inProgressRun(h);
  return {
    runId,
    fragment: (text) => answer!.text(text),
    async finish() {
      answer!.usage({ prompt_tokens: 40, completion_tokens: 12 });
      answer!.done();
      await (await invocation).text();
    },
  };
}

/** The newest `in_progress` run on `Symphony` (the paced one: runs on other aliases end by themselves). */
async function inProgressRun(h: Pick<Harness, 'url' | 'apiKey'>): Promise<string> {
  for (let tries = 0; tries < 100; tries += 1) {
    const list = await fetch(`${h.url}/runs?status=in_progress&alias=Symphony`, { headers: { authorization: `Bearer ${h.apiKey}` } });
    const id = ((await list.json()) as { data: { id: string }[] }).data[0]?.id;
    if (id) return id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the paced run is not listed as in_progress');
}

export interface RunRequests {
  /** `GET /runs/{run_id}` requests. */
  reads: number;
  /** `GET /runs/{run_id}/events` requests, each with its `Last-Event-ID` (`''` when none). */
  streams: string[];
  stop(): void;
}

/** Counts, from now on, what the page asks the server about `runId`. */
export function countRunRequests(page: Page, runId: string): RunRequests {
  const count = (request: Request) => {
    if (request.method() !== 'GET') return;
    const path = new URL(request.url()).pathname;
    if (path === `/runs/${runId}`) counted.reads += 1;
    if (path === `/runs/${runId}/events`) counted.streams.push(request.headers()['last-event-id'] ?? '');
  };
  const counted: RunRequests = { reads: 0, streams: [], stop: () => page.off('request', count) };
  page.on('request', count);
  return counted;
}

/**
 * The run's event log as the server sends it (`GET /runs/{run_id}/events` with the API key), up to the first event
 * whose data holds `until`: the raw text of those whole events and the last `id:` among them.
 */
export async function eventsSoFar(h: Pick<Harness, 'url' | 'apiKey'>, runId: string, until: string): Promise<{ text: string; lastId: number }> {
  const controller = new AbortController();
  const response = await fetch(`${h.url}/runs/${runId}/events`, { headers: { authorization: `Bearer ${h.apiKey}` }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`getRunEvents answered ${response.status}: ${await response.text()}`);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the run's events ended before one held ${JSON.stringify(until)}`);
      text += value;
      const whole = text.slice(0, text.lastIndexOf('\n\n') + 2);
      if (whole.includes(until)) {
        const ids = [...whole.matchAll(/^id: ?(\d+)$/gm)].map((m) => Number(m[1]));
        return { text: whole, lastId: Math.max(...ids) };
      }
    }
  } finally {
    controller.abort();
  }
}

/** A sync invocation of `agentSlug` (alias Sonata, the local engine) over the API, answered `200`; its run's id. */
export async function invokeAgent(h: Pick<Harness, 'url' | 'apiKey'>, agentSlug: string, content: string): Promise<string> {
  const res = await fetch(`${h.url}/v1/inference`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentSlug, alias: 'Sonata', messages: [{ role: 'user', content }] }),
  });
  if (res.status !== 200) throw new Error(`the invocation answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { runId: string }).runId;
}
