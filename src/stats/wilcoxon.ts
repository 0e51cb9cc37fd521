import { gridP } from "./grid.js";
import { requireFiniteNumbers, requirePositiveInteger } from "./input.js";
import { midRanks } from "./ranks.js";
import { normalTwoSided } from "./special.js";
import { roundingTolerance } from "./tolerance.js";

export interface WilcoxonResult {
  /** W+ = sum of the (mid-)ranks of the positive deltas, as R's `wilcox.test` reports it (V). */
  readonly statistic: number;
  /** Two-sided p-value. */
  readonly p: number;
  readonly method: "exact" | "normal";
  /** Number of zero deltas dropped before ranking. */
  readonly zeros: number;
  /** Number of tie groups among the non-zero |deltas| (a group = 2 or more equal values). */
  readonly ties: number;
  /** Number of non-zero deltas that were ranked. */
  readonly n: number;
}

export interface WilcoxonOptions {
  /** Use the exact distribution when at most this many deltas are non-zero. Default 100. */
  readonly exactLimit?: number;
  /**
   * Relative tolerance (share of max|d|) for zeros and ties among |deltas|. Default: the
   * rounding rule of `tolerance.ts`, the one the sign-flip test and the summary use.
   */
  readonly relativeTolerance?: number;
}

/**
 * Wilcoxon signed-rank test, two-sided.
 *
 * - Zeros: Wilcoxon's original treatment — zero deltas are dropped and the remaining n are
 *   ranked (SciPy's `zero_method="wilcox"`, R's default). With no non-zero delta, p = 1.
 * - Ties: tied |deltas| get mid-ranks. The exact distribution is computed over the actual
 *   mid-rank scores (doubled, so they are integers) by dynamic programming over the sum of the
 *   positive scores; each score is positive with probability 1/2 under the null. p is the share
 *   of sign assignments whose |W+ − E W+| is at least the observed one.
 * - Above `exactLimit` (100) non-zero deltas: normal approximation with mean n(n+1)/4, variance
 *   n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tie groups of size t, and a continuity correction of 1/2.
 * - |d| values within the rounding tolerance of `tolerance.ts` of each other count as tied, and
 *   |d| below it as zero (the same zeros as the sign-flip test), so deltas equal on paper but
 *   not in the last bit of floating point are still ties.
 */
export function wilcoxonSignedRank(
  deltas: readonly number[],
  options: WilcoxonOptions = {},
): WilcoxonResult {
  const values = requireFiniteNumbers(deltas, "deltas");
  const exactLimit = requirePositiveInteger(options.exactLimit ?? 100, "exactLimit");
  // The zero and tie rule of every test here (`tolerance.ts`), unless the caller sets one.
  const tolerance =
    options.relativeTolerance === undefined
      ? roundingTolerance(values)
      : options.relativeTolerance *
        values.reduce((maximum, value) => Math.max(maximum, Math.abs(value)), 0);
  const nonZero = values.filter((value) => Math.abs(value) > tolerance);
  const zeros = values.length - nonZero.length;
  const n = nonZero.length;
  if (n === 0) return { statistic: 0, p: 1, method: "exact", zeros, ties: 0, n };

  const { ranks, tieGroups } = midRanks(
    nonZero.map((value) => Math.abs(value)),
    tolerance,
  );
  let statistic = 0;
  nonZero.forEach((value, index) => {
    if (value > 0) statistic += ranks[index] as number;
  });
  const ties = tieGroups.length;
  if (n <= exactLimit) {
    // Mid-ranks are multiples of 1/2, so doubled ranks are exact integers.
    const doubled = Array.from(ranks, (rank) => Math.round(2 * rank));
    // W+ − T/2 = (Σ ε_i·r_i)/2 for random signs ε_i, so the exact null distribution of W+ is the
    // sign-flip distribution of the rank scores, computed by the same integer dynamic programme.
    const total = doubled.reduce((sum, value) => sum + value, 0);
    const p = gridP(doubled, 2 * Math.round(2 * statistic) - total);
    return { statistic, p, method: "exact", zeros, ties, n };
  }
  const mean = (n * (n + 1)) / 4;
  const tieCorrection = tieGroups.reduce((sum, size) => sum + (size ** 3 - size), 0) / 48;
  const variance = (n * (n + 1) * (2 * n + 1)) / 24 - tieCorrection;
  const distance = Math.max(0, Math.abs(statistic - mean) - 0.5);
  const p = variance > 0 ? normalTwoSided(distance / Math.sqrt(variance)) : 1;
  return { statistic, p, method: "normal", zeros, ties, n };
}
