import { requireFiniteNumbers } from "./input.js";
import { studentTTwoSided } from "./special.js";

export interface TTestResult {
  /** t = mean / (s / √n); may be ±Infinity (see `pairedTTest`). */
  readonly t: number;
  /** Degrees of freedom n − 1. */
  readonly df: number;
  /** Two-sided p-value. */
  readonly p: number;
}

/** Relative size below which a standard deviation counts as zero (rounding noise of equal deltas). */
const zeroVarianceTolerance = 1e-9;

/**
 * Two-sided paired t-test of the deltas against a mean of zero, with the Student t distribution
 * computed from the regularized incomplete beta function.
 *
 * Conventions where the textbook formula divides by zero (never NaN):
 * - n = 1: no variance can be estimated, so there is no evidence: t = 0, df = 0, p = 1.
 * - All deltas equal (standard deviation ≤ 1e-9·max|d|, which absorbs floating-point noise in
 *   deltas that are equal on paper) and non-zero: the evidence is as strong as it gets:
 *   t = ±Infinity with the sign of the mean, p = 0.
 * - All deltas zero (or equal to zero within the same tolerance): t = 0, p = 1.
 */
export function pairedTTest(deltas: readonly number[]): TTestResult {
  const values = requireFiniteNumbers(deltas, "deltas");
  const count = values.length;
  const df = count - 1;
  if (count === 1) return { t: 0, df: 0, p: 1 };
  const mean = values.reduce((sum, value) => sum + value, 0) / count;
  // Two passes: the textbook one-pass formula loses precision when the mean is large.
  const sumOfSquares = values.reduce((sum, value) => sum + (value - mean) ** 2, 0);
  const standardDeviation = Math.sqrt(sumOfSquares / df);
  const scale = values.reduce((maximum, value) => Math.max(maximum, Math.abs(value)), 0);
  if (standardDeviation <= zeroVarianceTolerance * scale) {
    if (Math.abs(mean) <= zeroVarianceTolerance * scale || scale === 0) return { t: 0, df, p: 1 };
    return { t: mean > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY, df, p: 0 };
  }
  const t = mean / (standardDeviation / Math.sqrt(count));
  return { t, df, p: studentTTwoSided(t, df) };
}
