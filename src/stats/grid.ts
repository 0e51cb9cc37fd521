/**
 * Integer grids under the sign-flip test (its "dp" and "dp-bounds" methods, see `signflip.ts`):
 * finding the common unit of a set of magnitudes by rational reconstruction, and the exact null
 * distribution of signed sums of integers by dynamic programming. Pure arithmetic with no
 * knowledge of the test's options, so it stands alone (the Wilcoxon test uses `gridP` too).
 */

/** The grid limits `signFlipTest` applies by default (its `defaults` spread these). */
export const GRID_DEFAULTS: {
  readonly relativeTolerance: number;
  readonly maxDenominator: number;
  readonly maxGridTotal: number;
  readonly maxGridWork: number;
} = {
  relativeTolerance: 1e-9,
  maxDenominator: 65_536,
  maxGridTotal: 2 ** 22,
  maxGridWork: 3e8,
};

/** The common unit of a set of magnitudes, if they lie on a grid small enough to use. */
export interface Grid {
  readonly unit: number;
  /** Integer multiples: magnitudes[i] ≈ multiples[i]·unit. */
  readonly multiples: readonly number[];
  readonly total: number;
}

/**
 * Find u and integers k_i ≥ 1 with |m_i − k_i·u| ≤ tol·m_i, via rational reconstruction of the
 * ratios m_i / min(m). Returns undefined when a ratio has no small-denominator approximation or
 * when the resulting Σk_i or m'·Σk_i exceeds the configured limits.
 */
export function findGrid(
  magnitudes: readonly number[],
  limits: {
    readonly relativeTolerance?: number;
    readonly maxDenominator?: number;
    readonly maxGridTotal?: number;
    readonly maxGridWork?: number;
  } = {},
): Grid | undefined {
  const tolerance = limits.relativeTolerance ?? GRID_DEFAULTS.relativeTolerance;
  const maxDenominator = limits.maxDenominator ?? GRID_DEFAULTS.maxDenominator;
  const maxTotal = limits.maxGridTotal ?? GRID_DEFAULTS.maxGridTotal;
  const maxWork = limits.maxGridWork ?? GRID_DEFAULTS.maxGridWork;
  if (magnitudes.length === 0) return { unit: 1, multiples: [], total: 0 };
  const reference = Math.min(...magnitudes);
  if (!(reference > 0)) return undefined;

  const fractions: { numerator: number; denominator: number }[] = [];
  let commonDenominator = 1;
  for (const magnitude of magnitudes) {
    const fraction = rationalApproximation(magnitude / reference, tolerance, maxDenominator);
    if (fraction === undefined) return undefined;
    commonDenominator = leastCommonMultiple(commonDenominator, fraction.denominator);
    if (commonDenominator > maxTotal) return undefined;
    fractions.push(fraction);
  }
  // With reduced fractions and the smallest magnitude as reference (multiple L), the multiples
  // have no common factor: if |d_i| = b_i·u and min = a·u with gcd(a, b) = 1, then L = a.
  const multiples = fractions.map(
    ({ numerator, denominator }) => numerator * (commonDenominator / denominator),
  );
  const total = multiples.reduce((sum, value) => sum + value, 0);
  if (total > maxTotal || total * magnitudes.length > maxWork) return undefined;
  const unit = reference / commonDenominator;
  // The reconstruction must reproduce every magnitude, not only its ratio to the reference.
  for (let index = 0; index < magnitudes.length; index++) {
    const magnitude = magnitudes[index] as number;
    if (Math.abs((multiples[index] as number) * unit - magnitude) > 4 * tolerance * magnitude) {
      return undefined;
    }
  }
  return { unit, multiples, total };
}

/**
 * Best rational approximation p/q of x > 0 with q ≤ maxDenominator and |x − p/q| ≤ tol·x, from
 * the convergents of the continued fraction of x.
 */
function rationalApproximation(
  x: number,
  tolerance: number,
  maxDenominator: number,
): { numerator: number; denominator: number } | undefined {
  let previousNumerator = 1;
  let previousDenominator = 0;
  let olderNumerator = 0;
  let olderDenominator = 1;
  let remainder = x;
  for (let step = 0; step < 64; step++) {
    const term = Math.floor(remainder);
    const numerator = term * previousNumerator + olderNumerator;
    const denominator = term * previousDenominator + olderDenominator;
    if (denominator > maxDenominator || !Number.isSafeInteger(numerator)) return undefined;
    if (Math.abs(x - numerator / denominator) <= tolerance * x) return { numerator, denominator };
    const fractional = remainder - term;
    if (fractional <= 0) return undefined;
    remainder = 1 / fractional;
    olderNumerator = previousNumerator;
    olderDenominator = previousDenominator;
    previousNumerator = numerator;
    previousDenominator = denominator;
  }
  return undefined;
}

function greatestCommonDivisor(left: number, right: number): number {
  let a = Math.abs(left);
  let b = Math.abs(right);
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function leastCommonMultiple(left: number, right: number): number {
  return (left / greatestCommonDivisor(left, right)) * right;
}

/**
 * Exact P(|Σ ε_i k_i| ≥ |observed|) for positive integers k_i. With W = Σ_{ε_i=+1} k_i the
 * signed sum is 2W − K (K = Σk_i), and W is symmetric around K/2, so the two-sided p is twice the
 * lower tail P(W ≤ (K − |observed|)/2). The subset-sum distribution of W is built in place, one
 * delta at a time: f'(w) = (f(w) + f(w − k))/2.
 */
export function gridP(multiples: readonly number[], observed: number): number {
  const target = Math.abs(observed);
  if (target === 0) return 1;
  const total = multiples.reduce((sum, value) => sum + value, 0);
  if (target > total) return 0;
  return Math.min(1, 2 * lowerTail(subsetSumDistribution(multiples, total), (total - target) / 2));
}

/**
 * The distribution of W = Σ_{ε_i=+1} k_i over the 2^m equally likely sign assignments, for
 * non-negative integers k_i summing to `total`: built in place, one delta at a time,
 * f'(w) = (f(w) + f(w − k))/2.
 */
export function subsetSumDistribution(
  multiples: readonly number[],
  total: number,
  /** Only P(W = 0 … upTo) are wanted: f'(w) needs f at w and below only, so the rest is skipped. */
  upTo = total,
): Float64Array {
  const end = Math.max(0, Math.min(total, upTo));
  const probabilities = new Float64Array(end + 1);
  probabilities[0] = 1;
  let reach = 0;
  // Small multiples first keep `reach` (the work per step) small for longer.
  for (const step of [...multiples].sort((left, right) => left - right)) {
    // A zero multiple sends both signs to the same sum: the distribution does not change.
    if (step === 0) continue;
    const newReach = Math.min(end, reach + step);
    for (let sum = newReach; sum >= step; sum--) {
      probabilities[sum] =
        0.5 * ((probabilities[sum] as number) + (probabilities[sum - step] as number));
    }
    for (let sum = Math.min(step, end + 1) - 1; sum >= 0; sum--) {
      probabilities[sum] = 0.5 * (probabilities[sum] as number);
    }
    reach = newReach;
  }
  return probabilities;
}

/** P(W ≤ end) for a distribution over 0 … total; 0 when end < 0. */
export function lowerTail(probabilities: Float64Array, end: number): number {
  let tail = 0;
  for (let sum = 0; sum <= end && sum < probabilities.length; sum++)
    tail += probabilities[sum] as number;
  return tail;
}
