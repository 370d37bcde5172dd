import { describe, expect, it } from 'vitest';
import { PLANS } from '../../vocabulary/plans.ts';
import { nextRolloverStu } from './rollover.ts';

describe('nextRolloverStu', () => {
  const quota = PLANS.starter.quotaStu;
  it.each([
    ['half used', { quotaStu: quota, rolloverStu: 0, consumedStu: 1_000_000 }, 1_000_000],
    ['nothing used: capped at one quota', { quotaStu: quota, rolloverStu: quota, consumedStu: 0 }, quota],
    ['rollover carried, capped', { quotaStu: quota, rolloverStu: 1_500_000, consumedStu: 1_000_000 }, quota],
    ['rollover partly used', { quotaStu: quota, rolloverStu: 500_000, consumedStu: 2_000_000 }, 500_000],
    ['all used', { quotaStu: quota, rolloverStu: 0, consumedStu: quota }, 0],
    ['overage is not carried as debt', { quotaStu: quota, rolloverStu: 0, consumedStu: 2_400_000 }, 0],
    ['plan downgrade caps at the new quota', { quotaStu: 10_000_000, rolloverStu: 0, consumedStu: 0, capStu: quota }, quota],
  ])('%s', (_name, closing, want) => {
    expect(nextRolloverStu(closing)).toBe(want);
  });
});
