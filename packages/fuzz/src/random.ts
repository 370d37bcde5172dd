/**
 * @module Seeded randomness: one run seed derives every per-operation, per-phase stream, so a seed replays a run.
 */

/** 32-bit FNV-1a hash of a string; mixes the run seed with a label so streams are independent but reproducible. */
export function hashSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h | 0;
}

/** A small deterministic generator (mulberry32) for choices that are not fast-check arbitraries. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** A fresh 32-bit seed for a nested stream. */
  seed(): number {
    return this.int(0, 0x7fffffff);
  }
}

/** A random seed for a run that did not get one. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 0x7fffffff);
}
