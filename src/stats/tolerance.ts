/**
 * When two floating-point figures of a test are "the same": one rule for every test in this
 * module, so a delta is never a zero to one test and a sign to another.
 *
 * The only reason not to compare exactly is rounding: deltas such as 100·(7/12 − 5/12) and
 * 100·(3/12 − 1/12) are equal on paper and differ in the last bits, and so do sums of them
 * taken in different orders. Any sum of n terms of magnitude at most Σ|dᵢ| is off by at most
 * about n·2^−52·Σ|dᵢ|, so the tolerance is that bound with a generous factor (64) and nothing
 * wider: a relative tolerance (the earlier 10^−9) swallows genuine deltas that are many orders
 * smaller than the rest (100 and 10^−8 gave p = 1, the exact p is 0.5).
 */

/** Factor over n·2^−52·Σ|dᵢ|: covers the rounding of forming the deltas and of every sum. */
const ROUNDING_FACTOR = 64;

/**
 * The tie tolerance of a vector of deltas: two signed sums closer than this are ties, and a
 * delta no larger than this is a zero (it cannot move any sum by more than the rounding).
 */
export function roundingTolerance(values: ArrayLike<number>): number {
  let total = 0;
  for (let index = 0; index < values.length; index++) total += Math.abs(values[index] as number);
  return ROUNDING_FACTOR * values.length * Number.EPSILON * total;
}

/** The deltas that carry a sign (|d| above the rounding tolerance), in input order. */
export function nonZeroDeltas(values: readonly number[]): number[] {
  const tolerance = roundingTolerance(values);
  return values.filter((value) => Math.abs(value) > tolerance);
}
