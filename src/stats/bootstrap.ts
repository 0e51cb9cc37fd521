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
  /** null: unbounded below (some resample had no spread, so its t is infinite), or no interval. */
  readonly lower: number | null;
  readonly upper: number | null;
  /** How the interval was made, so every place that shows it can say so. */
  readonly method: "studentized-bootstrap";
  /**
   * Why there is no interval: every delta is equal, so resampling cannot vary and a zero-width
   * "interval" would claim certainty the data do not give. null when there is one.
   */
  readonly none: string | null;
  readonly resamples: number;
  readonly seed: number;
}

/**
 * Studentized ("bootstrap-t") confidence interval of the mean delta: draw `resamples` samples
 * of size n with replacement (seeded xoshiro128**), and for each the t-statistic
 * t = (resample mean − mean)/(resample sd / √n); the interval is
 * [mean − t_(1+level)/2 · se, mean − t_(1−level)/2 · se] with t_q the q-quantile of those t and
 * se = sd/√n of the data. Quantiles interpolate linearly between order statistics (the "type 7"
 * definition of R and NumPy's default). Unlike the percentile bootstrap (86–92 % at n = 10 for
 * a nominal 95 %), its coverage is close to nominal at small n: `bootstrap.test.ts` checks it
 * by a seeded simulation. A resample without spread (zero sd) has an infinite t unless its mean
 * is the data's; such resamples make an end infinite, reported as null (unbounded), which is
 * what discrete deltas with few distinct values honestly give at small n.
 */
export function bootstrapMeanCi(
  deltas: readonly number[],
  options: BootstrapOptions = {},
): ConfidenceInterval {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(options.level ?? 0.95, "level");
  const resamples = requirePositiveInteger(options.resamples ?? 10_000, "resamples");
  const seed = options.seed ?? 1;
  const count = values.length;
  const mean = values.reduce((sum, value) => sum + value, 0) / count;
  const standardError = standardDeviation(values, mean) / Math.sqrt(count);
  const base = { level, method: "studentized-bootstrap" as const, resamples, seed };
  if (!(standardError > 0) || count < 2) {
    return {
      ...base,
      lower: null,
      upper: null,
      none:
        count < 2
          ? "one delta: no spread to resample"
          : `every delta equals ${mean}: resampling cannot vary, so there is no interval`,
    };
  }
  const random = createSeededRandom(seed);
  const source = Float64Array.from(values);
  const statistics = new Float64Array(resamples);
  // The bound is checked once, not on each of resamples · n draws (10⁷ at n = 1000).
  const index = random.below(count);
  for (let resample = 0; resample < resamples; resample++) {
    let sum = 0;
    let squares = 0;
    for (let draw = 0; draw < count; draw++) {
      const value = source[index()] as number;
      sum += value;
      squares += value * value;
    }
    const resampleMean = sum / count;
    const variance = Math.max(0, (squares - count * resampleMean * resampleMean) / (count - 1));
    const error = Math.sqrt(variance / count);
    const difference = resampleMean - mean;
    // Relative to the data's spread, a resample sd below rounding is no spread at all.
    statistics[resample] =
      error > 1e-12 * standardError
        ? difference / error
        : Math.abs(difference) <= 1e-12 * standardError
          ? 0
          : difference > 0
            ? Number.POSITIVE_INFINITY
            : Number.NEGATIVE_INFINITY;
  }
  statistics.sort();
  const upperT = quantileOfSorted(statistics, (1 + level) / 2);
  const lowerT = quantileOfSorted(statistics, (1 - level) / 2);
  const end = (value: number) => (Number.isFinite(value) ? value : null);
  return {
    ...base,
    lower: end(mean - upperT * standardError),
    upper: end(mean - lowerT * standardError),
    none: null,
  };
}

function standardDeviation(values: readonly number[], mean: number): number {
  if (values.length < 2) return 0;
  const squares = values.reduce((sum, value) => sum + (value - mean) ** 2, 0);
  return Math.sqrt(squares / (values.length - 1));
}

/** Linear interpolation between order statistics at position q·(n − 1). */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const weight = position - below;
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  // Infinite order statistics (a resample t without spread) must not turn into NaN (∞·0).
  if (weight === 0 || low === high) return low;
  return low * (1 - weight) + high * weight;
}
