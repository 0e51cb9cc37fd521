/**
 * Power of the sign-flip test, for recommending how many requirements (or repeats) would make an
 * effect of a given size detectable. The model, stated once (see `README.md`):
 *
 *   requirement deltas d₁ … dₘ independent, each Normal(δ, σ²),
 *
 * with δ the effect to detect (points) and σ the standard deviation of requirement deltas
 * (points). Power is P(sign-flip p < α and Δ has the sign of δ), estimated by simulation with a
 * fixed seed, so the same inputs always give the same answer:
 *
 * - m ≤ `exactLimit` (20): each simulated vector gets its exact sign-flip p (`signFlipTest`).
 * - m > 20: the conditional sign-flip distribution of Σεᵢdᵢ has variance Σdᵢ² and is close to
 *   normal (Lindeberg), so the test is taken as |Σdᵢ| ≥ z₁₋α/₂·√Σdᵢ²; this costs O(m) per vector
 *   instead of O(2^(m/2)).
 *
 * The test is scale-free (p is unchanged when every delta is multiplied by a constant), so power
 * depends on δ/σ and m only; σ = 0 means every delta equals δ.
 */
import { InputError } from "../core/errors.js";
import { gridP } from "./grid.js";
import { requireOpenUnitInterval, requirePositiveInteger } from "./input.js";
import { createSeededRandom, type SeededRandom } from "./random.js";
import { signFlipTest } from "./signflip.js";
import { normalTwoSided } from "./special.js";

export interface PowerOptions {
  /** Simulated delta vectors. Default 2 000 (standard error ≤ 0.011). */
  readonly draws?: number;
  readonly seed?: number;
  /** Requirements up to which each simulated p is exact. Default 20. */
  readonly exactLimit?: number;
}

export interface PowerEstimate {
  readonly requirements: number;
  readonly effect: number;
  readonly sd: number;
  readonly alpha: number;
  readonly power: number;
  /** Binomial standard error of `power`. */
  readonly standardError: number;
  readonly draws: number;
  readonly seed: number;
  readonly method: "exact" | "normal-approximation" | "paired-binomial" | "paired-binomial-normal";
}

const DEFAULTS = { draws: 2_000, seed: 1, exactLimit: 20 };

/** A standard normal deviate (Box–Muller; the second of each pair is dropped for simplicity). */
function normal(random: SeededRandom): number {
  const u = (random.nextUint32() + 1) / 4_294_967_297;
  const v = random.nextFloat();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** z with P(|Z| ≥ z) = alpha, by bisection on the two-sided normal tail. */
function twoSidedCritical(alpha: number): number {
  let low = 0;
  let high = 40;
  for (let step = 0; step < 200; step++) {
    const middle = (low + high) / 2;
    if (normalTwoSided(middle) > alpha) low = middle;
    else high = middle;
  }
  return high;
}

function requireNumber(value: unknown, field: string, minimum: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < minimum) {
    throw new InputError(
      "stats.out-of-range",
      `${String(value)} is not a finite number ≥ ${minimum}`,
      { field },
    );
  }
  return value;
}

/**
 * Power of the sign-flip test with `requirements` deltas under the model above.
 *
 * @experimental
 */
export function signFlipPower(
  input: {
    readonly requirements: number;
    readonly effect: number;
    readonly sd: number;
    readonly alpha?: number;
  },
  options: PowerOptions = {},
): PowerEstimate {
  const m = requirePositiveInteger(input.requirements, "requirements");
  const effect = requireNumber(input.effect, "effect", Number.NEGATIVE_INFINITY);
  const sd = requireNumber(input.sd, "sd", 0);
  const alpha = requireOpenUnitInterval(input.alpha ?? 0.05, "alpha");
  const draws = requirePositiveInteger(options.draws ?? DEFAULTS.draws, "draws");
  const seed = options.seed ?? DEFAULTS.seed;
  const exactLimit = options.exactLimit ?? DEFAULTS.exactLimit;
  const method = m <= exactLimit ? "exact" : "normal-approximation";
  const random = createSeededRandom(seed);
  const critical = twoSidedCritical(alpha);
  const deltas = new Array<number>(m);
  let detected = 0;
  for (let draw = 0; draw < draws; draw++) {
    let sum = 0;
    let squares = 0;
    for (let index = 0; index < m; index++) {
      const value = effect + sd * normal(random);
      deltas[index] = value;
      sum += value;
      squares += value * value;
    }
    // Detected means significant in the direction of the effect (a wrong-sign "Harmful" for a
    // helpful skill is no detection); with δ = 0 either direction counts, i.e. the size.
    const rightSign = effect === 0 || Math.sign(sum) === Math.sign(effect);
    if (!rightSign || squares === 0) continue;
    const significant =
      method === "exact"
        ? signFlipTest(deltas, { method: "exact" }).p < alpha
        : Math.abs(sum) >= critical * Math.sqrt(squares);
    if (significant) detected++;
  }
  const power = detected / draws;
  return {
    requirements: m,
    effect,
    sd,
    alpha,
    power,
    standardError: Math.sqrt((power * (1 - power)) / draws),
    draws,
    seed,
    method,
  };
}

export interface RequirementsForPower {
  readonly effect: number;
  readonly sd: number;
  readonly alpha: number;
  readonly targetPower: number;
  /** The smallest number of requirements found with power ≥ target; null above `maxRequirements`. */
  readonly requirements: number | null;
  /** The estimate at `requirements` (or at `maxRequirements` when not reached). */
  readonly estimate: PowerEstimate;
}

/**
 * The smallest m with estimated power ≥ `targetPower` (default 0.8), up to `maxRequirements`
 * (default 1000). Power rises with m except for the small saw-teeth of a discrete test. The
 * search runs on the normal approximation first (cheap at any m: doubling, then bisection),
 * then, when that lands at or below `exactLimit` + 1, walks from there with exact p-values to
 * the smallest m whose exact power meets the target (m with 2^(1−m) ≥ α are never candidates).
 * Results are remembered per input, since reports ask for the same figures again.
 *
 * @experimental
 */
export function requirementsForPower(
  input: {
    readonly effect: number;
    readonly sd: number;
    readonly alpha?: number;
    readonly targetPower?: number;
    readonly maxRequirements?: number;
  },
  options: PowerOptions = {},
): RequirementsForPower {
  const alpha = requireOpenUnitInterval(input.alpha ?? 0.05, "alpha");
  const target = requireOpenUnitInterval(input.targetPower ?? 0.8, "targetPower");
  const maxRequirements = requirePositiveInteger(input.maxRequirements ?? 1000, "maxRequirements");
  const effect = requireNumber(input.effect, "effect", Number.NEGATIVE_INFINITY);
  const sd = requireNumber(input.sd, "sd", 0);
  if (effect === 0) {
    throw new InputError("stats.out-of-range", "an effect of 0 cannot be detected; give δ ≠ 0", {
      field: "effect",
    });
  }
  const memoKey = JSON.stringify([effect, sd, alpha, target, maxRequirements, options]);
  const remembered = memo.get(memoKey);
  if (remembered !== undefined) return remembered;

  const exactLimit = options.exactLimit ?? DEFAULTS.exactLimit;
  const approximate = new Map<number, PowerEstimate>();
  const approximately = (m: number) => {
    let estimate = approximate.get(m);
    if (estimate === undefined) {
      estimate = signFlipPower(
        { requirements: m, effect, sd, alpha },
        { ...options, exactLimit: 0 },
      );
      approximate.set(m, estimate);
    }
    return estimate;
  };
  const exactly = (m: number) => signFlipPower({ requirements: m, effect, sd, alpha }, options);
  const result = (requirements: number | null, estimate: PowerEstimate): RequirementsForPower => {
    const found = { effect, sd, alpha, targetPower: target, requirements, estimate };
    if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
    memo.set(memoKey, found);
    return found;
  };

  let first = 1;
  while (2 ** (1 - first) >= alpha) first++;
  if (first > maxRequirements) return result(null, exactly(maxRequirements));
  let failing = first - 1;
  let high = first;
  while (approximately(high).power < target) {
    if (high >= maxRequirements) return result(null, exactly(high));
    failing = high;
    high = Math.min(maxRequirements, high * 2);
  }
  while (high - failing > 1) {
    const middle = Math.floor((failing + high) / 2);
    if (approximately(middle).power >= target) high = middle;
    else failing = middle;
  }
  if (high > exactLimit + 1) return result(high, approximately(high));
  // Exact p-values from here: walk down while one fewer still meets the target, else up.
  let m = Math.min(high, exactLimit);
  let estimate = exactly(m);
  if (estimate.power >= target) {
    while (m - 1 >= first) {
      const fewer = exactly(m - 1);
      if (fewer.power < target) break;
      m -= 1;
      estimate = fewer;
    }
    return result(m, estimate);
  }
  while (estimate.power < target) {
    if (m >= maxRequirements) return result(null, estimate);
    m += 1;
    estimate = exactly(m);
  }
  return result(m, estimate);
}

const MEMO_LIMIT = 256;
const memo = new Map<string, RequirementsForPower>();

/**
 * The paired binomial model for pass-ratio deltas (what a report's deltas are): requirement i
 * has a baseline pass probability π₀ drawn from `baseline` (observed pass ratios of the
 * unassisted arm), the skill moves it to π₁ = π₀ + δ/100 clipped to [0, 1], and each arm passes
 * Binomial(`trials`, π) of its checks (checks × repeats per arm), so
 * dᵢ = 100·(K₁ − K₀)/trials takes only the values of a grid of step 100/trials — discrete, with
 * ties and zeros, which the Normal model of `signFlipPower` ignores (it over-states the power of
 * small designs: 0.811 against 0.790 at 21 requirements in the case).
 */
export interface PairedBinomialInput {
  readonly requirements: number;
  /** δ in points. */
  readonly effect: number;
  /** Observed unassisted pass ratios in [0, 1], resampled for each simulated requirement. */
  readonly baseline: readonly number[];
  /** Bernoulli trials per arm and requirement (checks × repeats). */
  readonly trials: number;
  readonly alpha?: number;
}

/** Requirements up to which each simulated p is exact (integer grid); normal approximation beyond. */
const PAIRED_EXACT_LIMIT = 40;

/**
 * Power under the paired binomial model, by seeded simulation. Each simulated vector's p is the
 * exact sign-flip p of its integer deltas K₁ − K₀ (`gridP`) up to 40 requirements, the normal
 * approximation |Σk| ≥ z·√Σk² beyond. The same seed gives the same draws for every m (common
 * random numbers), so the estimates for neighbouring m move together and the smallest m that
 * reaches a target is stable across seeds at the default 20 000 draws (standard error ≤ 0.0036).
 *
 * @experimental
 */
export function pairedBinomialPower(
  input: PairedBinomialInput,
  options: Pick<PowerOptions, "draws" | "seed"> = {},
): PowerEstimate {
  const m = requirePositiveInteger(input.requirements, "requirements");
  const trials = requirePositiveInteger(input.trials, "trials");
  const effect = requireNumber(input.effect, "effect", Number.NEGATIVE_INFINITY);
  const alpha = requireOpenUnitInterval(input.alpha ?? 0.05, "alpha");
  const baseline = input.baseline.map((value, index) => {
    if (!(typeof value === "number" && value >= 0 && value <= 1)) {
      throw new InputError("stats.out-of-range", `baseline item ${index} is not in [0, 1]`, {
        field: "baseline",
      });
    }
    return value;
  });
  if (baseline.length === 0) {
    throw new InputError("stats.empty-input", "the baseline needs at least one pass ratio", {
      field: "baseline",
    });
  }
  const draws = requirePositiveInteger(options.draws ?? 20_000, "draws");
  const seed = options.seed ?? DEFAULTS.seed;
  const random = createSeededRandom(seed);
  const critical = twoSidedCritical(alpha);
  const passes = (probability: number) => {
    let count = 0;
    for (let trial = 0; trial < trials; trial++) if (random.nextFloat() < probability) count++;
    return count;
  };
  const multiples = new Array<number>(m);
  let detected = 0;
  for (let draw = 0; draw < draws; draw++) {
    let sum = 0;
    let squares = 0;
    let nonZero = 0;
    for (let index = 0; index < m; index++) {
      const before = baseline[random.nextBelow(baseline.length)] as number;
      const after = Math.min(1, Math.max(0, before + effect / 100));
      const difference = passes(after) - passes(before);
      sum += difference;
      squares += difference * difference;
      if (difference !== 0) multiples[nonZero++] = Math.abs(difference);
    }
    const rightSign = effect === 0 ? sum !== 0 : Math.sign(sum) === Math.sign(effect);
    if (!rightSign) continue;
    const significant =
      m <= PAIRED_EXACT_LIMIT
        ? gridP(multiples.slice(0, nonZero), sum) < alpha
        : Math.abs(sum) >= critical * Math.sqrt(squares);
    if (significant) detected++;
  }
  const power = detected / draws;
  return {
    requirements: m,
    effect,
    sd: Number.NaN,
    alpha,
    power,
    standardError: Math.sqrt((power * (1 - power)) / draws),
    draws,
    seed,
    method: m <= PAIRED_EXACT_LIMIT ? "paired-binomial" : "paired-binomial-normal",
  };
}

/**
 * The smallest m with paired-binomial power ≥ `targetPower`, up to `maxRequirements`: doubling,
 * then bisection (power rises with m but for the saw-teeth of a discrete test), then a walk
 * down while one fewer still meets the target.
 *
 * @experimental
 */
export function requirementsForPairedBinomialPower(
  input: Omit<PairedBinomialInput, "requirements"> & {
    readonly targetPower?: number;
    readonly maxRequirements?: number;
  },
  options: Pick<PowerOptions, "draws" | "seed"> = {},
): { readonly requirements: number | null; readonly estimate: PowerEstimate } {
  const alpha = requireOpenUnitInterval(input.alpha ?? 0.05, "alpha");
  const target = requireOpenUnitInterval(input.targetPower ?? 0.8, "targetPower");
  const maxRequirements = requirePositiveInteger(input.maxRequirements ?? 1000, "maxRequirements");
  const at = (m: number) => pairedBinomialPower({ ...input, requirements: m, alpha }, options);
  let first = 1;
  while (2 ** (1 - first) >= alpha) first++;
  if (first > maxRequirements) return { requirements: null, estimate: at(maxRequirements) };
  let failing = first - 1;
  let high = first;
  let estimate = at(high);
  while (estimate.power < target) {
    if (high >= maxRequirements) return { requirements: null, estimate };
    failing = high;
    high = Math.min(maxRequirements, high * 2);
    estimate = at(high);
  }
  while (high - failing > 1) {
    const middle = Math.floor((failing + high) / 2);
    const candidate = at(middle);
    if (candidate.power >= target) {
      high = middle;
      estimate = candidate;
    } else failing = middle;
  }
  return { requirements: high, estimate };
}
