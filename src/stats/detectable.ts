/**
 * What a sign-flip test on m requirement deltas could have detected, so "Ineffective" says how
 * strong an effect it ruled out (definitions in `README.md`, "What a test could detect"):
 *
 * - `minimumP`: the smallest p the test can give with the observed number m' of non-zero deltas,
 *   2^(1−m'): only the two assignments with every sign equal reach |Σd|. When it is ≥ α, no
 *   magnitude of these non-zero deltas could have made the skill Golden or Harmful.
 * - `size`: the exact probability, under the null hypothesis (each sign equally likely, the
 *   magnitudes as observed), that the test gives p < α; at most α, smaller because p is discrete.
 *   The sum of these over many tests is the expected number of false discoveries when no skill
 *   has any effect.
 * - `interval`: the exact (1 − α) confidence interval for a uniform effect θ (model: dᵢ = θ + eᵢ
 *   with eᵢ symmetric about 0), by inverting the test: θ is inside when the sign-flip test of
 *   d − θ gives p ≥ α. Every requirement is shifted, zeros too. Effects outside it are ruled out
 *   at level α. Unbounded when 2^(1−m) ≥ α (no shift of m deltas can reach p < α).
 * - `shiftToGolden` / `shiftToHarmful`: the smallest uniform shift of every observed delta up
 *   (down) beyond which the test would have given p < α with Δ > 0 (Δ < 0): max(0, −lower) and
 *   max(0, upper). 0 when the profile already is Golden (Harmful).
 */

import { findGrid } from "./grid.js";
import { requireFiniteNumbers, requireOpenUnitInterval } from "./input.js";
import { allSignedSums, type SignFlipMethod, signFlipTest } from "./signflip.js";
import { nonZeroDeltas, roundingTolerance } from "./tolerance.js";

export interface DetectableOptions {
  /** Relative tolerance of grid detection, as in `signFlipTest` (zeros and ties: `tolerance.ts`). Default 1e-9. */
  readonly relativeTolerance?: number;
  /** Requirements up to which the interval uses exact p-values. Default 20. */
  readonly exactLimit?: number;
  /** Beyond `exactLimit`: seeded random sign assignments per p (the same ones for every θ). Default 10 000. */
  readonly draws?: number;
  readonly seed?: number;
}

export interface ShiftInterval {
  /** Confidence level, 1 − α. */
  readonly level: number;
  /** null: unbounded below (no uniform effect can be ruled out). */
  readonly lower: number | null;
  /** null: unbounded above. */
  readonly upper: number | null;
  /** How each p of the inversion was computed. */
  readonly method: SignFlipMethod;
  /** "monte-carlo" only: seeded sign assignments per p (the same ones for every θ). */
  readonly draws?: number;
  /**
   * Why there is no interval although m is large enough: every delta is equal, so the test
   * rejects every other uniform effect and the "interval" would have zero width — a statement
   * about the absence of spread, not a measurement of the effect. lower and upper are null then.
   */
  readonly none?: string;
}

/**
 * The label every report shows beside a shift interval: its method and coverage. Exact
 * inversion has coverage ≥ 1 − α under the model; the Monte Carlo one (beyond `exactLimit`
 * deltas) only approximately, its ends off by up to about 0.1 points.
 */
export function describeShiftInterval(interval: ShiftInterval): string {
  const level = `${Math.round(100 * interval.level)}%`;
  return interval.method === "monte-carlo"
    ? `approximate ${level} sign-flip interval: Monte Carlo inversion, ${interval.draws ?? "seeded"} draws per p, ends within about 0.1 points, coverage about ${level}`
    : `exact ${level} sign-flip interval: test inversion, coverage at least ${level} under the uniform-effect model`;
}

export interface DetectableEffect {
  readonly n: number;
  readonly nonZero: number;
  readonly alpha: number;
  /** 2^(1 − nonZero) (1 when every delta is zero). */
  readonly minimumP: number;
  /** Whether these non-zero deltas, whatever their size, could give p < α. */
  readonly anyEffectDetectable: boolean;
  /** Exact P(p < α) under the null given the observed magnitudes; null when not computable exactly. */
  readonly size: number | null;
  readonly interval: ShiftInterval;
  /** Smallest upward shift of every delta beyond which p < α and Δ > 0; null when unbounded. */
  readonly shiftToGolden: number | null;
  /** Smallest downward shift of every delta beyond which p < α and Δ < 0; null when unbounded. */
  readonly shiftToHarmful: number | null;
}

const DEFAULTS = { relativeTolerance: 1e-9, exactLimit: 20, draws: 10_000, seed: 1 };

/** 2^(1−m'): the smallest sign-flip p with m' non-zero deltas. */
export function minimumSignFlipP(nonZero: number): number {
  return nonZero === 0 ? 1 : Math.min(1, 2 ** (1 - nonZero));
}

/**
 * The exact size of the sign-flip test at `alpha` given the observed magnitudes: the share of
 * the 2^m' sign assignments whose own p is below `alpha`. Enumeration for m' ≤ 20, the
 * integer-grid distribution beyond when the deltas lie on one; undefined otherwise.
 */
export function signFlipSize(
  deltas: readonly number[],
  alpha: number,
  options: Pick<DetectableOptions, "relativeTolerance"> = {},
): number | undefined {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(alpha, "alpha");
  const tolerance = options.relativeTolerance ?? DEFAULTS.relativeTolerance;
  const magnitudes = nonZeroDeltas(values).map(Math.abs);
  if (magnitudes.length === 0) return 0;
  if (magnitudes.length <= 20) return enumeratedSize(magnitudes, level, roundingTolerance(values));
  const grid = findGrid(magnitudes, { relativeTolerance: tolerance });
  return grid === undefined ? undefined : gridSize(grid.multiples, grid.total, level);
}

/**
 * Sorted descending |T| of all 2^m' assignments; an assignment's p is the share of |T'| ≥ |T| − τ
 * (the tie rule of `signFlipTest`), found with one pointer moving down the sorted list.
 */
function enumeratedSize(magnitudes: readonly number[], alpha: number, tau: number): number {
  const count = 2 ** magnitudes.length;
  const sums = allSignedSums(magnitudes);
  for (let index = 0; index < count; index++) sums[index] = Math.abs(sums[index] as number);
  sums.sort();
  sums.reverse();
  let below = 0;
  let pointer = 0;
  for (let index = 0; index < count; index++) {
    const threshold = (sums[index] as number) - tau;
    while (pointer < count && (sums[pointer] as number) >= threshold) pointer++;
    if (pointer / count < alpha) below++;
  }
  return below / count;
}

/**
 * The same on an integer grid: W = Σ_{εᵢ=+1} kᵢ has the subset-sum distribution, |T| = |2W − K|
 * is an exact integer, so ties are exact; the size is the largest tail P(|T| ≥ t) below α.
 */
function gridSize(multiples: readonly number[], total: number, alpha: number): number {
  const probabilities = new Float64Array(total + 1);
  probabilities[0] = 1;
  let reach = 0;
  for (const step of [...multiples].sort((left, right) => left - right)) {
    const newReach = reach + step;
    for (let sum = newReach; sum >= step; sum--) {
      probabilities[sum] =
        0.5 * ((probabilities[sum] as number) + (probabilities[sum - step] as number));
    }
    for (let sum = step - 1; sum >= 0; sum--)
      probabilities[sum] = 0.5 * (probabilities[sum] as number);
    reach = newReach;
  }
  // P(|T| = t) for t = |2w − K|, from the largest t down, accumulating the tail.
  const byLevel = new Map<number, number>();
  for (let w = 0; w <= total; w++) {
    const level = Math.abs(2 * w - total);
    byLevel.set(level, (byLevel.get(level) ?? 0) + (probabilities[w] as number));
  }
  let tail = 0;
  let size = 0;
  for (const level of [...byLevel.keys()].sort((left, right) => right - left)) {
    tail += byLevel.get(level) as number;
    if (tail < alpha) size = tail;
    else break;
  }
  return size;
}

/**
 * The exact (1 − α) confidence interval for a uniform shift (see the module comment). The
 * sign-flip p of d − θ is non-decreasing in θ below mean(d) and non-increasing above it (each
 * assignment's indicator switches once, at the mean of the deltas it flips), so each end is
 * found by bisection to 1e-9 of the deltas' range, then rounded to six decimals.
 *
 * @experimental
 */
export function shiftConfidenceInterval(
  deltas: readonly number[],
  alpha: number,
  options: DetectableOptions = {},
): ShiftInterval {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(alpha, "alpha");
  const settings = { ...DEFAULTS, ...withoutUndefined(options) };
  const m = values.length;
  const method: SignFlipMethod = m <= settings.exactLimit ? "exact" : "monte-carlo";
  const base = {
    level: 1 - level,
    method,
    ...(method === "monte-carlo" ? { draws: settings.draws } : {}),
  };
  if (minimumSignFlipP(m) >= level) return { ...base, lower: null, upper: null };
  const first = values[0] as number;
  if (values.every((value) => value === first)) {
    return {
      ...base,
      lower: null,
      upper: null,
      none: `every delta equals ${first}: with no spread the test rejects every other uniform effect, a point rather than an interval`,
    };
  }
  const p = (theta: number) =>
    signFlipTest(
      values.map((value) => value - theta),
      method === "exact"
        ? { method: "exact", relativeTolerance: settings.relativeTolerance }
        : {
            method: "monte-carlo",
            draws: settings.draws,
            seed: settings.seed,
            relativeTolerance: settings.relativeTolerance,
          },
    ).p;
  const mean = values.reduce((sum, value) => sum + value, 0) / m;
  const low = Math.min(...values);
  const high = Math.max(...values);
  const spread = Math.max(high - low, Math.abs(mean), 1);
  const precision = 1e-9 * spread;
  // Below min(d) every shifted delta is positive, so p = 2^(1−m) < α: rejected.
  const lower = bisect(low - spread, mean, (theta) => p(theta) >= level, precision);
  const upper = -bisect(-high - spread, -mean, (theta) => p(-theta) >= level, precision);
  // Bisection ends within the tie tolerance of the true end (a subset mean); six decimals of a
  // point are far below anything the report shows and keep the JSON readable.
  return { ...base, lower: roundEnd(lower), upper: roundEnd(upper) };
}

function roundEnd(value: number): number {
  return Number(value.toFixed(6)) + 0;
}

/** The smallest x in (rejected, accepted] with accepts(x), for a predicate false then true. */
function bisect(
  rejected: number,
  accepted: number,
  accepts: (value: number) => boolean,
  precision: number,
): number {
  let low = rejected;
  let high = accepted;
  while (high - low > precision) {
    const middle = low + (high - low) / 2;
    if (middle === low || middle === high) break;
    if (accepts(middle)) high = middle;
    else low = middle;
  }
  return high;
}

/**
 * Everything above for one vector of requirement deltas.
 *
 * @experimental
 */
export function detectableEffect(
  deltas: readonly number[],
  alpha = 0.05,
  options: DetectableOptions = {},
): DetectableEffect {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(alpha, "alpha");
  const tolerance = options.relativeTolerance ?? DEFAULTS.relativeTolerance;
  const nonZero = nonZeroDeltas(values).length;
  const minimumP = minimumSignFlipP(nonZero);
  const interval = shiftConfidenceInterval(values, level, options);
  return {
    n: values.length,
    nonZero,
    alpha: level,
    minimumP,
    anyEffectDetectable: minimumP < level,
    size: signFlipSize(values, level, { relativeTolerance: tolerance }) ?? null,
    interval,
    shiftToGolden: interval.lower === null ? null : Math.max(0, -interval.lower),
    shiftToHarmful: interval.upper === null ? null : Math.max(0, interval.upper),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<T>;
}
