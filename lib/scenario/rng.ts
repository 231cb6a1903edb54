/** A small seeded PRNG (mulberry32): the same seed gives the same scenario on every machine. */
export type Rng = () => number;

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole-number count with the given mean: floor(mean) plus one with probability frac(mean). */
export function countWithMean(mean: number, rng: Rng): number {
  if (mean <= 0) return 0;
  const whole = Math.floor(mean);
  return whole + (rng() < mean - whole ? 1 : 0);
}
