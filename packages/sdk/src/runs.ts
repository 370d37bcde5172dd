/**
 * @module Runs: retrieve, cancel, list (one page when awaited, every run of every page when iterated) and
 * poll until a run is terminal, following the spec's polling rule.
 */
import type { RequestOptions, Transport } from './core/transport.ts';
import { sleep } from './core/retry.ts';
import { OPERATIONS, type OperationInputs, type Schemas } from './generated/operations.ts';

export type Run = Schemas['Run'];
export type RunDetail = Schemas['RunDetail'];
export type RunList = Schemas['RunList'];
export type RunStatus = Schemas['RunStatus'];
export type RunListParams = NonNullable<OperationInputs['listRuns']['query']>;

/** `completed`, `failed` and `canceled` end a run; `in_progress` means keep polling. */
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'canceled'];

export interface PollOptions extends RequestOptions {
  /** First wait between two reads; default 1,000 ms (the spec: 1 to 2 s). */
  intervalMs?: number;
  /** The wait grows by half each time up to this; default 10,000 ms (the spec: about 10 s). */
  maxIntervalMs?: number;
}

export class Runs {
  constructor(private readonly transport: Transport) {}

  /** `GET /runs/{run_id}`: the run with its steps and tool calls. */
  retrieve(runId: string, options?: RequestOptions): Promise<RunDetail> {
    return this.transport.call(OPERATIONS.getRun, { path: { run_id: runId } }, options) as Promise<RunDetail>;
  }

  /** `POST /runs/{run_id}/cancel`. */
  cancel(runId: string, options?: RequestOptions): Promise<RunDetail> {
    return this.transport.call(OPERATIONS.cancelRun, { path: { run_id: runId } }, options) as Promise<RunDetail>;
  }

  /**
   * `GET /runs`. `await client.runs.list(params)` is one page `{ data, total, limit, offset }`;
   * `for await (const run of client.runs.list(params))` walks every run of every page from `offset` on.
   */
  list(params: RunListParams = {}, options?: RequestOptions): RunListing {
    return new RunListing((query) => this.transport.call(OPERATIONS.listRuns, { query }, options) as Promise<RunList>, params);
  }

  /**
   * Reads the run until its status is terminal and resolves with it: first after `intervalMs`, then half as
   * long again each time up to `maxIntervalMs`; when `X-RateLimit-Remaining` reaches 0 it waits for
   * `X-RateLimit-Reset`.
   */
  async poll(runId: string, options: PollOptions = {}): Promise<RunDetail> {
    const { intervalMs = 1_000, maxIntervalMs = 10_000, ...request } = options;
    let wait = intervalMs;
    for (;;) {
      const { response, text } = await this.transport.send(OPERATIONS.getRun, { path: { run_id: runId } }, request);
      const detail = JSON.parse(text ?? '{}') as RunDetail;
      if (TERMINAL_STATUSES.includes(detail.run.status)) return detail;
      let delay = wait;
      if (response.headers.get('x-ratelimit-remaining') === '0') {
        const reset = Number(response.headers.get('x-ratelimit-reset')) * 1000;
        if (Number.isFinite(reset)) delay = Math.max(delay, reset - Date.now());
      }
      await sleep(delay, request.signal);
      wait = Math.min(maxIntervalMs, wait * 1.5);
    }
  }
}

/** The answer of `runs.list`: awaitable (one page) and async-iterable (every run of every page). */
export class RunListing implements PromiseLike<RunList>, AsyncIterable<Run> {
  private first: Promise<RunList> | undefined;

  constructor(
    private readonly fetchPage: (query: RunListParams) => Promise<RunList>,
    private readonly params: RunListParams,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: awaiting the listing gives its first page, by design.
  then<A = RunList, B = never>(
    onFulfilled?: ((page: RunList) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.first ??= this.fetchPage(this.params);
    return this.first.then(onFulfilled, onRejected);
  }

  /** Every page in turn, from the requested offset to the end. */
  async *pages(): AsyncGenerator<RunList> {
    let offset = this.params.offset ?? 0;
    for (;;) {
      const page = offset === (this.params.offset ?? 0) && this.first ? await this.first : await this.fetchPage({ ...this.params, offset });
      yield page;
      offset = page.offset + page.data.length;
      if (page.data.length === 0 || offset >= page.total) return;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Run> {
    for await (const page of this.pages()) yield* page.data;
  }
}
