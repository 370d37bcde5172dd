/**
 * @module Runs: retrieve, cancel, list and poll until a run is terminal, following the spec's polling rule.
 * `list` has the Stainless shape, the same in the Python SDK: awaited, a page (`data`, `total`, the next page);
 * iterated with `for await`, every run of every page.
 */
import type { RequestOptions, Transport } from './core/transport.ts';
import { sleep } from './core/retry.ts';
import { OPERATIONS, type OperationInputs, type Schemas } from './generated/operations.ts';
import { followRunEvents, type RunEvent, type RunEventsOptions } from './run-events.ts';

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
   * `GET /v1/runs/{run_id}/events`: the run's events (`run.created`, `run.routed`, `text.delta`, …, `run.usage`, then
   * one of `run.completed`, `run.failed`, `run.canceled`), replayed from the start or after `after` (a `sequence`),
   * then live until the terminal event, after which the loop ends. A dropped connection is resumed with
   * `Last-Event-ID` (at most `maxRetries` failed attempts in a row, with backoff; then `StreamInterruptedError`), and no
   * event is yielded twice. A run that does not exist throws `NotFoundError`. Leaving the loop early ends the request.
   */
  events(runId: string, options?: RunEventsOptions): AsyncIterable<RunEvent> {
    return followRunEvents(this.transport, runId, options);
  }

  /**
   * `GET /runs`. `await client.runs.list(params)` is a {@link RunPage} (`data`, `total`, `limit`, `offset`,
   * `hasNextPage()`, `getNextPage()`); `for await (const run of client.runs.list(params))` walks every run of
   * every page from `offset` on.
   */
  list(params: RunListParams = {}, options?: RequestOptions): RunPagePromise {
    return new RunPagePromise((query) => this.transport.call(OPERATIONS.listRuns, { query }, options) as Promise<RunList>, params);
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

type FetchPage = (query: RunListParams) => Promise<RunList>;

/**
 * One page of `GET /runs`: its fields are the contract's `RunList` (and `JSON.stringify` gives exactly that);
 * `for await` over a page walks every run from this page to the last one.
 */
export class RunPage implements RunList, AsyncIterable<Run> {
  readonly data: Run[];
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
  // Private (#) so that they stay out of JSON.stringify and equality checks.
  readonly #fetchPage: FetchPage;
  readonly #params: RunListParams;

  constructor(fetchPage: FetchPage, params: RunListParams, page: RunList) {
    this.data = page.data;
    this.total = page.total;
    this.limit = page.limit;
    this.offset = page.offset;
    this.#fetchPage = fetchPage;
    this.#params = params;
  }

  /** False on the last page (and on an empty one, so that a shrinking list cannot loop). */
  hasNextPage(): boolean {
    return this.data.length > 0 && this.offset + this.data.length < this.total;
  }

  /** The page after this one, with the same filters and `limit`; rejects when there is none. */
  async getNextPage(): Promise<RunPage> {
    if (!this.hasNextPage()) throw new Error('no next page: check hasNextPage() first');
    const params = { ...this.#params, offset: this.offset + this.data.length };
    return new RunPage(this.#fetchPage, params, await this.#fetchPage(params));
  }

  /** This page, then each following one. */
  async *iterPages(): AsyncGenerator<RunPage> {
    let page: RunPage = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Run> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/** The answer of `runs.list`: awaitable (the first {@link RunPage}) and async-iterable (every run of every page). */
export class RunPagePromise implements PromiseLike<RunPage>, AsyncIterable<Run> {
  #first: Promise<RunPage> | undefined;

  constructor(
    private readonly fetchPage: FetchPage,
    private readonly params: RunListParams,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: awaiting the listing gives its first page, by design (Stainless's PagePromise).
  then<A = RunPage, B = never>(
    onFulfilled?: ((page: RunPage) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.#first ??= this.fetchPage(this.params).then((page) => new RunPage(this.fetchPage, this.params, page));
    return this.#first.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Run> {
    yield* await this;
  }
}
