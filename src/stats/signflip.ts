import { InputError } from "../core/errors.js";
import { findGrid, GRID_DEFAULTS, type Grid, gridP, subsetSumDistribution } from "./grid.js";
import { requireFiniteNumbers, requirePositiveInteger } from "./input.js";
import { createSeededRandom } from "./random.js";
import { roundingTolerance } from "./tolerance.js";

/**
 * The exact two-sided paired sign-flip test of the protocol (A.6): under the null hypothesis
 * every delta is equally likely to have either sign, so
 *
 *   p = #{ε ∈ {−1, +1}^m : |Σ ε_i·|d_i|| ≥ |Σ d_i|} / 2^m
 *
 * (|mean| ≥ |observed mean| is the same condition as |sum| ≥ |observed sum|). Deltas equal to
 * zero contribute nothing to any sum, so they are factored out: the share over 2^m assignments
 * equals the share over the 2^m' assignments of the m' non-zero deltas.
 *
 * Three ways to compute p, chosen in this order when `method` is "auto":
 * 1. "exact": enumeration of all 2^m' sums, when m' ≤ `enumerationLimit` (20). The sums of each
 *    half are listed, sorted and counted against each other (meet in the middle), so the count is
 *    exact and costs O(2^(m'/2)·m') instead of O(2^m'). Each listed sum adds at most m'/2 terms,
 *    so rounding stays far below the tie tolerance.
 * 2. "dp": when every |d_i| is (within tolerance) an integer multiple k_i of one unit u — pass
 *    ratios have small denominators, so deltas in points are — the exact null distribution of
 *    Σ ε_i k_i is computed by dynamic programming over integer sums, with probabilities in a
 *    Float64Array so 2^1000 assignments do not overflow. The unit is found by rational
 *    reconstruction of |d_i| / min|d| (continued fractions, denominators ≤ `maxDenominator`)
 *    and the lcm L of the denominators: u = min|d| / L. Cost O(m'·Σk_i). The grid is accepted
 *    only if k_i·u reproduces every |d_i| within the tie tolerance, so the result is the exact p
 *    of deltas that differ from the input by less than that tolerance.
 * 3. "exact" again for m' ≤ `maxEnumeration` (40) when the deltas are not on a grid. (Meet in
 *    the middle holds 2·2^(m'/2) sums: 16 MiB at m' = 40, 0.5 GiB at 50, 16 GiB at 60 — so it
 *    stops here.)
 * 4. "dp-bounds" beyond that: a guaranteed bracket pLower ≤ p ≤ pUpper, computed exactly. Every
 *    magnitude is rounded to the nearest multiple k_i·u of a unit u chosen as fine as the work
 *    budget allows (Σk_i ≈ 2·`boundWork`/m', at most `maxGridTotal`), so that any signed sum
 *    differs from its rounded twin by at most δ = Σ|m_i − k_i·u| (plus float slack). Then
 *      P(|Σε_i k_i·u| ≥ T + δ) ≤ p ≤ P(|Σε_i k_i·u| ≥ T − δ),
 *    both read off one exact distribution of the integer sums (the "dp" recurrence). The rounding
 *    errors B = Σε_i·e_i (e_i = m_i − k_i·u) are a Rademacher sum, so Hoeffding's inequality
 *    P(|B| ≥ t) ≤ 2·exp(−t²/(2Σe_i²)) gives a narrower bracket for t < δ:
 *      P(|A| ≥ T + t) − P(|B| ≥ t) ≤ p ≤ P(|A| ≥ T − t) + P(|B| ≥ t),
 *    and the best of these over a range of t is kept (t = δ is the worst-case bracket above).
 *    The p reported is pUpper — conservative, a bound, and said to be one wherever it is shown
 *    — and `error` = pUpper − pLower bounds its distance from the exact p. With a
 *    `decisionLevel` (the α of a verdict) a bracket containing it is refined, 4× the work each
 *    time, up to `maxGridWork` steps (about 0.6 s at m' = 1 000 on a 2-core machine); if α is
 *    still inside, `decided` is false and the verdict is "undecided", never a class.
 * 5. "monte-carlo", only when asked for: `draws` (default 100 000) seeded random sign
 *    assignments; p is reported as (b + 1)/(draws + 1), which is a valid p-value (never 0), with
 *    the binomial standard error √(p̂(1 − p̂)/draws) of the share p̂ = b/draws (no guaranteed
 *    bound: `error` is absent).
 *
 * Ties: a sum counts as "at least as extreme" when |T| ≥ |S| − τ with τ the rounding bound of
 * `tolerance.ts` (64·n·2^−52·Σ|d_i|), so sums that are equal on paper but differ in the last
 * bits of floating point count as ties; deltas with |d_i| ≤ τ are zeros for the same reason.
 * Nothing wider: 100 and 10^−8 are two non-zero deltas (p = 0.5).
 */
export type SignFlipMethod = "exact" | "dp" | "dp-bounds" | "monte-carlo";

export interface SignFlipOptions {
  /** Force one method; "auto" (default) picks as described above. */
  readonly method?: "auto" | SignFlipMethod;
  /**
   * Relative tolerance of grid detection ("dp": a magnitude may differ from k_i·u by this share
   * of itself). Ties and zeros follow the rounding rule of `tolerance.ts`. Default 1e-9.
   */
  readonly relativeTolerance?: number;
  /** Under "auto", enumerate when there are at most this many non-zero deltas. Default 20. */
  readonly enumerationLimit?: number;
  /** Never enumerate more than this many non-zero deltas (memory 2·2^(m'/2) doubles). Default 40. */
  readonly maxEnumeration?: number;
  /** Largest denominator accepted when reconstructing delta ratios. Default 65 536. */
  readonly maxDenominator?: number;
  /** Largest Σk_i (the length of the probability array) for "dp". Default 2^22. */
  readonly maxGridTotal?: number;
  /** Largest m'·Σk_i (inner-loop steps) for "dp". Default 3·10^8. */
  readonly maxGridWork?: number;
  /** Inner-loop steps the "dp-bounds" distribution may take (it sets the grid's fineness). Default 3·10^7. */
  readonly boundWork?: number;
  /**
   * The α of the verdict the p is for: a "dp-bounds" bracket that contains it is refined, up to
   * `maxGridWork` steps, so that the verdict is decided whenever that is affordable.
   */
  readonly decisionLevel?: number;
  /** Monte Carlo draws. Default 100 000. */
  readonly draws?: number;
  /** Monte Carlo seed. Default 1. */
  readonly seed?: number;
}

export interface SignFlipResult {
  readonly p: number;
  readonly method: SignFlipMethod;
  /** Number of non-zero deltas (the m' of the documentation). */
  readonly nonZero: number;
  /**
   * A guaranteed bound on |p − exact p|: 0 for "exact" and "dp" (up to floating-point rounding
   * of the sums, far below the tie tolerance), pUpper − pLower for "dp-bounds"; absent for
   * "monte-carlo", whose error is statistical (see `standardError`).
   */
  readonly error?: number;
  /**
   * "dp-bounds" only: the exact p lies in [pLower, pUpper]; p = pUpper is an upper bound, not
   * an estimate.
   */
  readonly pLower?: number;
  readonly pUpper?: number;
  /** Monte Carlo only: standard error of the estimated share. */
  readonly standardError?: number;
  /** Monte Carlo only: number of random sign assignments drawn. */
  readonly draws?: number;
  /** "dp": the grid unit u with |d_i| = k_i·u; "dp-bounds": the unit magnitudes were rounded to. */
  readonly unit?: number;
  /**
   * "dp-bounds" with a `decisionLevel` only: whether the bracket lies on one side of it
   * (pUpper < level or pLower ≥ level). false: the verdict at that level is undecided.
   */
  readonly decided?: boolean;
}

const defaults = {
  ...GRID_DEFAULTS,
  enumerationLimit: 20,
  maxEnumeration: 40,
  boundWork: 3e7,
  draws: 100_000,
  seed: 1,
};

// The grid arithmetic lives in `grid.ts`; these stay importable from here as before.
export { findGrid, type Grid, gridP } from "./grid.js";

export function signFlipTest(
  deltas: readonly number[],
  options: SignFlipOptions = {},
): SignFlipResult {
  const values = requireFiniteNumbers(deltas, "deltas");
  const settings = { ...defaults, ...withoutUndefined(options) };
  const method = options.method ?? "auto";
  if (!(settings.relativeTolerance >= 0 && settings.relativeTolerance < 1e-3)) {
    throw new InputError(
      "stats.out-of-range",
      `relativeTolerance ${settings.relativeTolerance} must be in [0, 1e-3)`,
      { field: "relativeTolerance" },
    );
  }

  // Zeros and ties by the one rule of `tolerance.ts`: within the rounding of the sums.
  const tolerance = roundingTolerance(values);
  const nonZero = values.filter((value) => Math.abs(value) > tolerance);
  const size = nonZero.length;
  const observed = Math.abs(nonZero.reduce((sum, value) => sum + value, 0));
  const magnitudes = nonZero.map((value) => Math.abs(value));
  const threshold = observed - tolerance;

  if (method === "exact") {
    requireEnumerable(size, settings.maxEnumeration);
    return { p: enumerationP(magnitudes, threshold), method: "exact", nonZero: size, error: 0 };
  }
  if (method === "dp-bounds") return boundedResult(magnitudes, threshold, settings);
  if (method === "dp") {
    const grid = findGrid(magnitudes, settings);
    if (grid === undefined) {
      throw new InputError(
        "stats.not-on-grid",
        "the deltas are not integer multiples of a common unit within the configured limits, so the dynamic-programming method does not apply",
        { field: "deltas" },
      );
    }
    return dynamicProgrammingResult(nonZero, grid, size);
  }
  if (method === "monte-carlo") return monteCarloResult(magnitudes, threshold, settings);

  // Every assignment is at least as extreme as a zero observed sum: no computation needed.
  if (size === 0 || threshold <= 0) {
    return { p: 1, method: "exact", nonZero: size, error: 0 };
  }
  if (size <= settings.enumerationLimit) {
    return { p: enumerationP(magnitudes, threshold), method: "exact", nonZero: size, error: 0 };
  }
  const grid = findGrid(magnitudes, settings);
  if (grid !== undefined) return dynamicProgrammingResult(nonZero, grid, size);
  if (size <= settings.maxEnumeration) {
    return { p: enumerationP(magnitudes, threshold), method: "exact", nonZero: size, error: 0 };
  }
  return boundedResult(magnitudes, threshold, settings);
}

function requireEnumerable(size: number, limit: number): void {
  if (size > limit) {
    throw new InputError(
      "stats.too-large-to-enumerate",
      `${size} non-zero deltas are too many to enumerate (limit ${limit}); use the "dp" or "monte-carlo" method`,
      { field: "deltas" },
    );
  }
}

/** All 2^h signed sums Σ ε_i·m_i of the given magnitudes, sorted ascending. */
function signedSums(magnitudes: readonly number[]): Float64Array {
  return allSignedSums(magnitudes).sort();
}

/**
 * All 2^h signed sums Σ ε_i·m_i of the given magnitudes, in enumeration order (unsorted): each
 * magnitude doubles the list, once added and once subtracted.
 */
export function allSignedSums(magnitudes: readonly number[]): Float64Array {
  const sums = new Float64Array(2 ** magnitudes.length);
  let length = 1;
  for (const magnitude of magnitudes) {
    for (let index = 0; index < length; index++) {
      const sum = sums[index] as number;
      sums[index] = sum + magnitude;
      sums[index + length] = sum - magnitude;
    }
    length *= 2;
  }
  return sums;
}

/**
 * Share of sign assignments with |Σ ε_i·m_i| ≥ threshold (threshold > 0), by meet in the middle.
 * Each half's list of sums is closed under negation (exactly, since IEEE rounding is symmetric),
 * so the count of sums ≤ −threshold equals the count of sums ≥ threshold.
 */
function enumerationP(magnitudes: readonly number[], threshold: number): number {
  if (magnitudes.length === 0 || threshold <= 0) return 1;
  const half = Math.floor(magnitudes.length / 2);
  const left = signedSums(magnitudes.slice(0, half));
  const right = signedSums(magnitudes.slice(half));
  // For ascending a, the first index j with right[j] ≥ threshold − a only moves down.
  let count = 0;
  let pointer = right.length;
  for (let index = 0; index < left.length; index++) {
    const needed = threshold - (left[index] as number);
    while (pointer > 0 && (right[pointer - 1] as number) >= needed) pointer--;
    count += right.length - pointer;
  }
  return Math.min(1, (2 * count) / 2 ** magnitudes.length);
}

function dynamicProgrammingResult(
  nonZero: readonly number[],
  grid: Grid,
  size: number,
): SignFlipResult {
  // The observed signed sum in grid units is an exact integer.
  let observed = 0;
  nonZero.forEach((value, index) => {
    observed += Math.sign(value) * (grid.multiples[index] as number);
  });
  return {
    p: gridP(grid.multiples, observed),
    method: "dp",
    nonZero: size,
    error: 0,
    unit: grid.unit,
  };
}

/**
 * "dp-bounds" (see the module comment): round the magnitudes to a grid as fine as the work
 * budget allows, and bracket p between the exact tails of the rounded sums at T ± δ. With a
 * `decisionLevel` (the α of a verdict), a bracket that contains it is refined (4× the work
 * each time, up to `maxGridWork`), so the verdict rests on the bracket's side of α whenever
 * that is affordable.
 */
function boundedResult(
  magnitudes: readonly number[],
  threshold: number,
  settings: typeof defaults & { readonly decisionLevel?: number },
): SignFlipResult {
  const size = magnitudes.length;
  const level = settings.decisionLevel;
  const decided = level === undefined ? {} : { decided: true };
  if (size === 0 || threshold <= 0)
    return { p: 1, method: "dp-bounds", nonZero: size, error: 0, pLower: 1, pUpper: 1, ...decided };
  let work = requirePositiveInteger(Math.floor(settings.boundWork), "boundWork");
  let result = bracket(magnitudes, threshold, work, settings.maxGridTotal);
  const straddles = (candidate: SignFlipResult) =>
    level !== undefined &&
    (candidate.pLower as number) < level &&
    level <= (candidate.pUpper as number);
  while (straddles(result) && work * 4 <= settings.maxGridWork && (result.unit as number) > 0) {
    work *= 4;
    const finer = bracket(magnitudes, threshold, work, settings.maxGridTotal);
    if ((finer.error as number) >= (result.error as number)) break;
    result = finer;
  }
  return level === undefined ? result : { ...result, decided: !straddles(result) };
}

function bracket(
  magnitudes: readonly number[],
  threshold: number,
  work: number,
  maxGridTotal: number,
): SignFlipResult {
  const size = magnitudes.length;
  const sumOfMagnitudes = magnitudes.reduce((sum, value) => sum + value, 0);
  // The truncated recurrence takes about m'·K·(1 − T/Σ|d|)/2 steps for K = Σk_i.
  const share = Math.max(0.05, 1 - threshold / sumOfMagnitudes);
  const gridTotal = Math.max(size, Math.min(maxGridTotal, Math.floor((2 * work) / (size * share))));
  const unit = sumOfMagnitudes / gridTotal;
  const multiples = magnitudes.map((magnitude) => Math.round(magnitude / unit));
  let deviation = 0;
  let squaredErrors = 0;
  for (let index = 0; index < size; index++) {
    const error = (magnitudes[index] as number) - (multiples[index] as number) * unit;
    deviation += Math.abs(error);
    squaredErrors += error * error;
  }
  // Slack for the floating-point rounding of the sums and products above (each well under
  // size·2^−52 of the total): it only widens the bracket.
  const slack = 4 * size * Number.EPSILON * sumOfMagnitudes;
  const total = multiples.reduce((sum, value) => sum + value, 0);
  // P(|2W − K| ≥ a) = 2·P(W ≤ (K − a)/2) for a > 0 (W and K − W have the same law); the lower
  // bound of the reach T − δ needs the longest tail.
  const lastNeeded = (reach: number) => Math.floor((total - reach / unit) / 2);
  const distribution = subsetSumDistribution(
    multiples,
    total,
    lastNeeded(threshold - deviation - slack),
  );
  const cumulative = distribution;
  for (let index = 1; index < cumulative.length; index++)
    cumulative[index] = (cumulative[index] as number) + (cumulative[index - 1] as number);
  const tail = (reach: number): number => {
    if (reach <= 0) return 1;
    const end = Math.min(lastNeeded(reach), cumulative.length - 1);
    return end < 0 ? 0 : Math.min(1, 2 * (cumulative[end] as number));
  };
  // Hoeffding's bound on the rounding errors' signed sum; 0 at the worst case t = δ.
  const errorTail = (t: number) =>
    t >= deviation ? 0 : Math.min(1, 2 * Math.exp((-t * t) / (2 * squaredErrors)));
  let pUpper = 1;
  let pLower = 0;
  const steps = 256;
  for (let step = 1; step <= steps; step++) {
    const t = (deviation * step) / steps;
    pUpper = Math.min(pUpper, tail(threshold - t - slack) + errorTail(t));
    pLower = Math.max(pLower, tail(threshold + t + slack) - errorTail(t));
  }
  pUpper = Math.min(1, pUpper);
  pLower = Math.min(pUpper, Math.max(0, pLower));
  return {
    p: pUpper,
    method: "dp-bounds",
    nonZero: size,
    error: pUpper - pLower,
    pLower,
    pUpper,
    unit,
  };
}

function monteCarloResult(
  magnitudes: readonly number[],
  threshold: number,
  settings: typeof defaults,
): SignFlipResult {
  const draws = requirePositiveInteger(settings.draws, "draws");
  const size = magnitudes.length;
  if (size === 0 || threshold <= 0) {
    return { p: 1, method: "monte-carlo", nonZero: size, standardError: 0, draws };
  }
  const random = createSeededRandom(settings.seed);
  const values = Float64Array.from(magnitudes);
  let extreme = 0;
  for (let draw = 0; draw < draws; draw++) {
    let sum = 0;
    let bits = 0;
    for (let index = 0; index < size; index++) {
      // One 32-bit random word supplies 32 signs.
      if ((index & 31) === 0) bits = random.nextUint32();
      // Branch-free: (bits & 1)·2 − 1 is ±1, and random signs defeat branch prediction.
      sum += (values[index] as number) * (((bits & 1) << 1) - 1);
      bits >>>= 1;
    }
    if (Math.abs(sum) >= threshold) extreme++;
  }
  const share = extreme / draws;
  return {
    p: (extreme + 1) / (draws + 1),
    method: "monte-carlo",
    nonZero: size,
    standardError: Math.sqrt((share * (1 - share)) / draws),
    draws,
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([key, entry]) => entry !== undefined && key !== "method"),
  ) as Partial<T>;
}
