/**
 * The statistics of a report across many skills (protocol A.6 done the way a statistician would,
 * definitions in `src/stats/README.md`):
 *
 * - multiple testing: Benjamini–Hochberg q-values over every tested (skill, configuration)
 *   profile, the class under FDR control beside the raw class, and the expected number of
 *   profiles with p < α if no skill had any effect (the sum of each test's exact size; at most
 *   m·α). Unscorable profiles are listed, never tested.
 * - what each test could detect (`detectableEffect`), and the within-requirement variability of
 *   repeats (pooled SD per arm).
 * - per configuration, how many requirements (at this and at more repeats) would make an effect
 *   of a given size detectable, under a stated model (`requirementsForPower`).
 */
import {
  benjaminiHochberg,
  classify,
  INEFFECTIVE_DEFINITION,
  requirementsForPairedBinomialPower,
  requirementsForPower,
  type SkillClass,
} from "../../stats/index.js";

/** What the statistics were computed with; every default is recorded in the report. */
export interface StatisticsSettings {
  readonly alpha: number;
  /** The effect (points) the design recommendation is for. */
  readonly detectEffect: number;
  readonly targetPower: number;
  /** Simulated delta vectors per power estimate, and their seed. */
  readonly powerDraws: number;
  readonly seed: number;
}

export const DEFAULT_STATISTICS: Omit<StatisticsSettings, "alpha"> = {
  detectEffect: 10,
  targetPower: 0.8,
  powerDraws: 1000,
  seed: 1,
};

/** A profile as the multiple-testing table needs it. */
export interface TestedProfile {
  readonly config: string;
  readonly skill: string;
  readonly delta: number | null;
  readonly p: number | null;
  readonly unscorable: string | null;
  /** The test's exact size at α given its deltas (null when not computable exactly). */
  readonly size: number | null;
}

export interface Multiplicity {
  readonly alpha: number;
  readonly method: "benjamini-hochberg";
  /** Profiles with a p-value. */
  readonly tested: number;
  /**
   * The m of the report's one BH family: the tested profiles plus the arm pairs other than
   * with-versus-none (`arms.ts`), each test counted once.
   */
  readonly familySize: number;
  /** What the Ineffective class means, printed in every report beside the classes. */
  readonly ineffective: string;
  /** Profiles left out (nothing measurable), with why. */
  readonly notTested: ReadonlyArray<{
    readonly config: string;
    readonly skill: string;
    readonly reason: string;
  }>;
  /** Profiles with p < α (the protocol's classes) and with q < α (the FDR classes). */
  readonly discoveries: { readonly raw: number; readonly fdr: number };
  readonly expectedFalseDiscoveries: {
    /**
     * Expected number of profiles with p < α if no skill had any effect: Σ of each test's exact
     * size given its observed deltas (α for a test whose size could not be computed exactly).
     */
    readonly globalNull: number;
    /** m·α: the same bound without using the discreteness of the tests. */
    readonly bound: number;
    /** Tests whose exact size was known (the others count α). */
    readonly exactSizes: number;
  };
  /** FDR control at α: the expected share of false discoveries among the `fdr` ones is at most α. */
  readonly fdrLevel: number;
}

/**
 * The class under FDR control: Golden / Harmful when q < α, else Ineffective. A q equal to α up
 * to rounding (m·p/k computed in floating point) is not below α: the same strict rule as p < α,
 * without letting the last bit decide a verdict. One rule for profiles and arm pairs.
 */
export function classUnderFdr(
  delta: number | null,
  q: number | null,
  alpha: number,
): SkillClass | null {
  if (q === null || delta === null) return null;
  return q < alpha * (1 - 1e-12) ? classify({ delta, p: 0 }, alpha) : "ineffective";
}

/** q-values (null for profiles without p), the FDR classes and the table for the report. */
export function multiplicityOf(
  profiles: readonly TestedProfile[],
  alpha: number,
  /**
   * The other tests of the same report (arm pairs other than with-versus-none), which join the
   * one BH family: the report runs a single correction, so no test is counted twice and no
   * family is corrected apart from the rest.
   */
  otherTests: ReadonlyArray<{ readonly delta: number | null; readonly p: number }> = [],
): {
  readonly q: ReadonlyArray<number | null>;
  readonly classFdr: ReadonlyArray<SkillClass | null>;
  readonly otherQ: ReadonlyArray<{ readonly q: number; readonly classFdr: SkillClass | null }>;
  readonly table: Multiplicity;
} {
  const testedIndices = profiles.flatMap((profile, index) => (profile.p === null ? [] : [index]));
  const adjusted = benjaminiHochberg([
    ...testedIndices.map((index) => profiles[index]?.p as number),
    ...otherTests.map((test) => test.p),
  ]);
  const q: Array<number | null> = profiles.map(() => null);
  testedIndices.forEach((index, position) => {
    q[index] = adjusted[position] as number;
  });
  const classFdr = profiles.map((profile, index) =>
    classUnderFdr(profile.delta, q[index] ?? null, alpha),
  );
  const otherQ = otherTests.map((test, index) => {
    const value = adjusted[testedIndices.length + index] as number;
    return { q: value, classFdr: classUnderFdr(test.delta, value, alpha) };
  });
  const tested = testedIndices.map((index) => profiles[index] as TestedProfile);
  const exact = tested.filter((profile) => profile.size !== null);
  return {
    q,
    classFdr,
    otherQ,
    table: {
      alpha,
      method: "benjamini-hochberg",
      tested: tested.length,
      familySize: tested.length + otherTests.length,
      ineffective: INEFFECTIVE_DEFINITION,
      notTested: profiles.flatMap((profile) =>
        profile.p === null
          ? [
              {
                config: profile.config,
                skill: profile.skill,
                reason: profile.unscorable ?? "no measurable requirement",
              },
            ]
          : [],
      ),
      discoveries: {
        raw: tested.filter((profile) => (profile.p as number) < alpha).length,
        fdr: classFdr.filter((value) => value === "golden" || value === "harmful").length,
      },
      expectedFalseDiscoveries: {
        globalNull: tested.reduce((sum, profile) => sum + (profile.size ?? alpha), 0),
        bound: tested.length * alpha,
        exactSizes: exact.length,
      },
      fdrLevel: alpha,
    },
  };
}

/** Pooled standard deviation (points) of scores across repeats, in one arm. */
export interface ArmVariability {
  /** null when no requirement has two repeats in this arm. */
  readonly sd: number | null;
  /** Degrees of freedom: Σ (repeats − 1) over requirements. */
  readonly df: number;
}

export interface RepeatVariability {
  /** Harmonic mean of repeats per requirement and arm (what divides the within variance). */
  readonly repeats: number;
  readonly without: ArmVariability;
  readonly with: ArmVariability;
}

/** Sample SD of scores (pass ratios) in points; null with fewer than two. */
export function scoreSd(scores: readonly number[]): number | null {
  if (scores.length < 2) return null;
  const points = scores.map((score) => 100 * score);
  const mean = points.reduce((sum, value) => sum + value, 0) / points.length;
  const variance =
    points.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (points.length - 1);
  return Math.sqrt(variance);
}

function pooled(groups: ReadonlyArray<readonly number[]>): ArmVariability {
  let squares = 0;
  let df = 0;
  for (const scores of groups) {
    const sd = scoreSd(scores);
    if (sd === null) continue;
    squares += (scores.length - 1) * sd * sd;
    df += scores.length - 1;
  }
  return { sd: df === 0 ? null : Math.sqrt(squares / df), df };
}

/**
 * Within-requirement variability of measurable requirements: per arm, the SD of the repeats'
 * scores pooled over requirements. The test itself sees one delta per requirement (the mean over
 * repeats), so this says how much of the delta's spread the repeats could still remove.
 */
export function repeatVariability(
  requirements: ReadonlyArray<{
    readonly without: readonly number[];
    readonly with: readonly number[];
  }>,
): RepeatVariability | null {
  const counts = requirements.flatMap((item) => [item.without.length, item.with.length]);
  if (counts.length === 0 || counts.some((count) => count === 0)) return null;
  const harmonic = counts.length / counts.reduce((sum, count) => sum + 1 / count, 0);
  return {
    repeats: harmonic,
    without: pooled(requirements.map((item) => item.without)),
    with: pooled(requirements.map((item) => item.with)),
  };
}

export interface DesignRow {
  readonly repeats: number;
  /** SD of requirement deltas (points) expected at this many repeats. */
  readonly sd: number;
  /** Requirements needed for the target power; null when not reachable (up to 1000). */
  readonly requirements: number | null;
  readonly power: number;
}

export interface DesignRecommendation {
  /** The model behind the figures, in words. */
  readonly model: string;
  readonly effect: number;
  readonly targetPower: number;
  readonly alpha: number;
  readonly draws: number;
  readonly seed: number;
  /** SD of requirement deltas pooled over the configuration's profiles (each around its own Δ). */
  readonly sd: number;
  readonly df: number;
  readonly profiles: number;
  /**
   * From repeats: the within-requirement variances of both arms (points²) and the harmonic mean
   * of repeats; null when no requirement was repeated.
   */
  readonly within: {
    readonly variance: number;
    readonly repeats: number;
    /** SD of the requirements' true deltas, √max(0, σ² − within/repeats). */
    readonly betweenSd: number;
  } | null;
  readonly rows: readonly DesignRow[];
  /**
   * The same question under the paired binomial model of pass ratios (`pairedBinomialPower`), at
   * the repeats used: baseline pass probabilities resampled from the unassisted arm, trials =
   * checks × repeats per arm. null when the runs carry no check counts.
   */
  readonly passRatio: {
    readonly model: string;
    readonly trials: number;
    /** null: more than `maxRequirements`. */
    readonly requirements: number | null;
    readonly maxRequirements: number;
    readonly power: number;
    readonly draws: number;
    readonly seed: number;
  } | null;
}

export const PASS_RATIO_MODEL =
  "paired binomial: per requirement a baseline pass probability π₀ resampled from the unassisted pass ratios, π₁ = π₀ + δ clipped to [0, 1], each arm passing Binomial(checks × repeats, π) of its checks; power of the exact sign-flip test of the resulting discrete deltas (normal approximation beyond 40 requirements) by seeded simulation";

/** The discrete design figure: requirements needed under the paired binomial model. */
function passRatioDesign(
  baseline: readonly number[],
  trials: number,
  settings: StatisticsSettings,
): DesignRecommendation["passRatio"] {
  if (baseline.length === 0 || !(trials >= 1)) return null;
  // Ten times the Normal model's draws (standard error ≤ 0.005 at the default), searched up to
  // 100 requirements: steady across seeds, and cheap enough for every report.
  const draws = 10 * settings.powerDraws;
  const maxRequirements = 100;
  const found = requirementsForPairedBinomialPower(
    {
      effect: settings.detectEffect,
      baseline,
      trials,
      alpha: settings.alpha,
      targetPower: settings.targetPower,
      maxRequirements,
    },
    { draws, seed: settings.seed },
  );
  return {
    model: PASS_RATIO_MODEL,
    trials,
    requirements: found.requirements,
    maxRequirements,
    power: found.estimate.power,
    draws,
    seed: settings.seed,
  };
}

/** Relative size below which a pooled standard deviation is rounding, not spread. */
const VARIANCE_TOLERANCE = 1e-9;

export const DESIGN_MODEL =
  "requirement deltas independent Normal(δ, σ²); σ² = τ² + (s²₀ + s²₁)/R, with s²₀, s²₁ the within-requirement variances of the arms over R repeats and τ² the variance of the requirements' true deltas; power of the exact sign-flip test (normal approximation of its null distribution beyond 20 requirements) by simulation with a fixed seed";

/**
 * How many requirements would detect `settings.detectEffect` points with `targetPower`, at the
 * repeats used and (when repeats were used) at more of them. Null when no profile of the
 * configuration has two measurable requirements, or when their deltas have no spread at all
 * (σ = 0 would make any effect look detectable from nothing).
 */
export function designRecommendation(
  profiles: ReadonlyArray<{
    readonly deltas: readonly number[];
    readonly variability: RepeatVariability | null;
    /** Unassisted pass ratios and checks × repeats per arm of the measurable requirements. */
    readonly baseline?: readonly number[];
    readonly trials?: readonly number[];
  }>,
  settings: StatisticsSettings,
): DesignRecommendation | null {
  let squares = 0;
  let df = 0;
  let used = 0;
  for (const profile of profiles) {
    if (profile.deltas.length < 2) continue;
    const mean = profile.deltas.reduce((sum, value) => sum + value, 0) / profile.deltas.length;
    squares += profile.deltas.reduce((sum, value) => sum + (value - mean) ** 2, 0);
    df += profile.deltas.length - 1;
    used += 1;
  }
  if (df === 0) return null;
  const sd = Math.sqrt(squares / df);
  // No spread at all (every delta of every profile equal, e.g. both arms untouched): a power
  // figure would come from σ = 0, a statement about nothing measured, so none is given.
  if (
    !(
      sd >
      VARIANCE_TOLERANCE *
        Math.max(1, ...profiles.flatMap((profile) => profile.deltas.map(Math.abs)))
    )
  )
    return null;

  // Within-requirement variance, pooled over profiles (weighted by degrees of freedom).
  let withinSquares = { without: 0, with: 0 };
  let withinDf = { without: 0, with: 0 };
  let inverseRepeats = 0;
  let repeatCount = 0;
  for (const profile of profiles) {
    const variability = profile.variability;
    if (variability === null || profile.deltas.length === 0) continue;
    for (const arm of ["without", "with"] as const) {
      const { sd: armSd, df: armDf } = variability[arm];
      if (armSd === null) continue;
      withinSquares = { ...withinSquares, [arm]: withinSquares[arm] + armDf * armSd * armSd };
      withinDf = { ...withinDf, [arm]: withinDf[arm] + armDf };
    }
    inverseRepeats += profile.deltas.length / variability.repeats;
    repeatCount += profile.deltas.length;
  }
  const repeats = repeatCount === 0 ? 1 : repeatCount / inverseRepeats;
  const within =
    withinDf.without > 0 && withinDf.with > 0
      ? (() => {
          const variance =
            withinSquares.without / withinDf.without + withinSquares.with / withinDf.with;
          return {
            variance,
            repeats,
            betweenSd: Math.sqrt(Math.max(0, sd * sd - variance / repeats)),
          };
        })()
      : null;

  const current = Math.max(1, Math.round(repeats));
  const plan =
    within === null
      ? [{ repeats: current, sd }]
      : [current, 2 * current, 5 * current].map((count) => ({
          repeats: count,
          sd: Math.sqrt(within.betweenSd ** 2 + within.variance / count),
        }));
  const rows = plan.map(({ repeats: count, sd: rowSd }) => {
    const found = requirementsForPower(
      {
        effect: settings.detectEffect,
        sd: rowSd,
        alpha: settings.alpha,
        targetPower: settings.targetPower,
      },
      { draws: settings.powerDraws, seed: settings.seed },
    );
    return {
      repeats: count,
      sd: rowSd,
      requirements: found.requirements,
      power: found.estimate.power,
    };
  });
  return {
    model: DESIGN_MODEL,
    effect: settings.detectEffect,
    targetPower: settings.targetPower,
    alpha: settings.alpha,
    draws: settings.powerDraws,
    seed: settings.seed,
    sd,
    df,
    profiles: used,
    within,
    rows,
    passRatio: (() => {
      const trials = profiles.flatMap((profile) => profile.trials ?? []);
      const average = trials.reduce((sum, value) => sum + value, 0) / trials.length;
      return passRatioDesign(
        profiles.flatMap((profile) => profile.baseline ?? []),
        Math.round(average),
        settings,
      );
    })(),
  };
}
