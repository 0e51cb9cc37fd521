import { requireFiniteNumbers, requireOpenUnitInterval, requirePositiveInteger } from "./input.js";
import { createSeededRandom } from "./random.js";

export interface BootstrapOptions {
  /** Confidence level, strictly between 0 and 1. Default 0.95. */
  readonly level?: number;
  /** Number of bootstrap resamples. Default 10 000. */
  readonly resamples?: number;
  /** Seed of the generator; the same seed gives the same interval. Default 1. */
  readonly seed?: number;
}

export interface ConfidenceInterval {
  readonly level: number;
  readonly lower: number;
  readonly upper: number;
  readonly resamples: number;
  readonly seed: number;
}

/**
 * Percentile bootstrap confidence interval of the mean delta: draw `resamples` samples of size n
 * with replacement (seeded xoshiro128**), take each mean, and report the (1 − level)/2 and
 * (1 + level)/2 quantiles of those means. Quantiles interpolate linearly between order statistics
 * (the "type 7" definition of R and NumPy's default).
 */
export function bootstrapMeanCi(
  deltas: readonly number[],
  options: BootstrapOptions = {},
): ConfidenceInterval {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(options.level ?? 0.95, "level");
  const resamples = requirePositiveInteger(options.resamples ?? 10_000, "resamples");
  const seed = options.seed ?? 1;
  const random = createSeededRandom(seed);
  const count = values.length;
  const source = Float64Array.from(values);
  const means = new Float64Array(resamples);
  // The bound is checked once, not on each of resamples · n draws (10⁷ at n = 1000).
  const index = random.below(count);
  for (let resample = 0; resample < resamples; resample++) {
    let sum = 0;
    for (let draw = 0; draw < count; draw++) sum += source[index()] as number;
    means[resample] = sum / count;
  }
  means.sort();
  return {
    level,
    lower: quantileOfSorted(means, (1 - level) / 2),
    upper: quantileOfSorted(means, (1 + level) / 2),
    resamples,
    seed,
  };
}

/** Linear interpolation between order statistics at position q·(n − 1). */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const weight = position - below;
  return (sorted[below] as number) * (1 - weight) + (sorted[above] as number) * weight;
}
