/** @module Tests of the retry hints every refusal sends through one helper. */
import { describe, expect, it } from 'vitest';
import { retryHints } from './errors.ts';

describe('retryHints', () => {
  it.each([
    ['a whole number of seconds', [5_000, true], { 'Retry-After': '5', 'Retry-After-Ms': '5000', 'X-Should-Retry': 'true' }],
    ['a wait rounded up to whole seconds', [11_250, true], { 'Retry-After': '12', 'Retry-After-Ms': '11250', 'X-Should-Retry': 'true' }],
    ['a wait under a second (Retry-After at least 1)', [300, false], { 'Retry-After': '1', 'Retry-After-Ms': '300', 'X-Should-Retry': 'false' }],
    ['fractions of a millisecond rounded up, never 0', [0.2, undefined], { 'Retry-After': '1', 'Retry-After-Ms': '1' }],
    ['no wait, only the decision', [undefined, false], { 'X-Should-Retry': 'false' }],
  ] as const)('%s', (_name, [waitMs, shouldRetry], want) => {
    expect(retryHints(waitMs, shouldRetry)).toEqual(want);
  });
});
