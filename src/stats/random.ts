import { InputError } from "../core/errors.js";

/**
 * A small seeded generator (xoshiro128**, seeded through splitmix32), so Monte Carlo and
 * bootstrap results are reproducible across machines and Node versions. `Math.random` cannot
 * be seeded, and a statistics result that changes between runs cannot be reviewed.
 */
export interface SeededRandom {
  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number;
  /** A uniformly distributed integer in [0, bound), without modulo bias; bound ≤ 2^32. */
  nextBelow(bound: number): number;
  /**
   * `nextBelow(bound)` for one fixed bound, checked once: the draws (and the generator's state
   * after them) are exactly those of calling `nextBelow(bound)` repeatedly, without re-checking
   * the bound on each of millions of draws.
   */
  below(bound: number): () => number;
  /** A uniformly distributed number in [0, 1) with 32 bits of resolution. */
  nextFloat(): number;
}

const twoTo32 = 4_294_967_296;

export function createSeededRandom(seed: number): SeededRandom {
  if (!Number.isSafeInteger(seed)) {
    throw new InputError("stats.bad-seed", `seed ${String(seed)} is not a safe integer`, {
      field: "seed",
    });
  }
  // Both halves of the seed feed splitmix32, so seeds that differ only above bit 32 still differ.
  let mixState = (seed >>> 0) ^ Math.imul(Math.floor(seed / twoTo32) | 0, 0x9e3779b1);
  const splitmix = (): number => {
    mixState = (mixState + 0x9e3779b9) | 0;
    let z = mixState;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let s0 = splitmix();
  let s1 = splitmix();
  let s2 = splitmix();
  let s3 = splitmix();
  // xoshiro must not start from the all-zero state.
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;

  const nextUint32 = (): number => {
    const product = Math.imul(s1, 5);
    const result = Math.imul((product << 7) | (product >>> 25), 9) >>> 0;
    const shifted = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= shifted;
    s3 = (s3 << 11) | (s3 >>> 21);
    return result;
  };

  /** The rejection limit of `bound`: the top partial block is redrawn so residues are uniform. */
  const limitOf = (bound: number): number => {
    if (!Number.isSafeInteger(bound) || bound < 1 || bound > twoTo32) {
      throw new InputError("stats.bad-bound", `bound ${bound} is not an integer in [1, 2^32]`);
    }
    return twoTo32 - (twoTo32 % bound);
  };

  return {
    nextUint32,
    below(bound: number): () => number {
      const limit = limitOf(bound);
      return () => {
        let value = nextUint32();
        while (value >= limit) value = nextUint32();
        return value % bound;
      };
    },
    nextBelow(bound: number): number {
      const limit = limitOf(bound);
      let value = nextUint32();
      while (value >= limit) value = nextUint32();
      return value % bound;
    },
    nextFloat(): number {
      return nextUint32() / twoTo32;
    },
  };
}
