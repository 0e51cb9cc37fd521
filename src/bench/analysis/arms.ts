/**
 * The arm comparison matrix: when a skill has variants (`variant:<name>` arms beside `without`
 * and `with`), every pair of its arms gets the same paired analysis as skill-versus-none —
 * per-requirement deltas of the mean score over repeats (flags that zero a run zero it; a pair
 * enters only when `pairMeasurement` says it is measurable), Δ, the exact sign-flip p and the
 * class — so "is v2 better than v1?" has an answer. The q-values come from the report's one
 * Benjamini–Hochberg family (`multiplicityOf`): every tested profile plus every arm pair that is
 * not the with-versus-none pair (that one *is* the profile's test, so it takes the profile's q
 * and is not counted twice), with the same guard against a q equal to α up to rounding.
 */
import { benjaminiHochberg, type SkillClass, summarizeDeltas } from "../../stats/index.js";
import { type Arm, type RunResult, variantName } from "../store/results.js";
import { armsMeasurement } from "./profile.js";
import { type RunDetail, runDetail } from "./report.js";
import { classUnderFdr } from "./statistics.js";

export interface ArmLabel {
  readonly arm: Arm;
  /** `none`, `skill`, or the variant's name. */
  readonly label: string;
}

export interface ArmPairComparison {
  /** The baseline of the comparison; Δ is `b` minus `a`. */
  readonly a: Arm;
  readonly b: Arm;
  readonly label: string;
  readonly requirements: number;
  /** Per measurable requirement: `100·(ȳ_b − ȳ_a)`. */
  readonly deltas: ReadonlyArray<{ readonly requirement: string; readonly delta: number }>;
  readonly unmeasured: ReadonlyArray<{ readonly requirement: string; readonly reason: string }>;
  readonly delta: number | null;
  readonly p: number | null;
  readonly class: SkillClass | null;
  readonly q: number | null;
  readonly classFdr: SkillClass | null;
}

export interface ArmMatrix {
  readonly config: string;
  readonly skill: string;
  readonly arms: readonly ArmLabel[];
  /** Every pair (a before b in `arms` order). */
  readonly pairs: readonly ArmPairComparison[];
}

function armOrder(arm: Arm): [number, string] {
  return arm === "without" ? [0, ""] : arm === "with" ? [1, ""] : [2, variantName(arm) ?? arm];
}

export function armLabel(arm: Arm): string {
  return arm === "without" ? "none" : arm === "with" ? "skill" : (variantName(arm) ?? arm);
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function comparePair(
  a: Arm,
  b: Arm,
  byRequirement: ReadonlyMap<string, ReadonlyMap<Arm, RunDetail[]>>,
  alpha: number,
): Omit<ArmPairComparison, "q" | "classFdr"> {
  const deltas: Array<{ requirement: string; delta: number }> = [];
  const unmeasured: Array<{ requirement: string; reason: string }> = [];
  for (const [requirement, arms] of byRequirement) {
    const left = arms.get(a) ?? [];
    const right = arms.get(b) ?? [];
    if (left.length === 0 || right.length === 0) {
      const missing = [left.length === 0 ? armLabel(a) : "", right.length === 0 ? armLabel(b) : ""]
        .filter((label) => label !== "")
        .join(" and ");
      unmeasured.push({ requirement, reason: `${missing} not run` });
      continue;
    }
    const verdict = armsMeasurement(left, right);
    if (!verdict.measurable) {
      unmeasured.push({ requirement, reason: verdict.reason });
      continue;
    }
    const scoreOf = (runs: readonly RunDetail[]) => mean(runs.map((run) => run.score));
    deltas.push({ requirement, delta: 100 * (scoreOf(right) - scoreOf(left)) });
  }
  const summary =
    deltas.length === 0
      ? undefined
      : summarizeDeltas(
          deltas.map((item) => item.delta),
          alpha,
        );
  return {
    a,
    b,
    label: `${armLabel(b)} vs ${armLabel(a)}`,
    requirements: byRequirement.size,
    deltas,
    unmeasured,
    delta: summary?.delta ?? null,
    p: summary?.signflip.p ?? null,
    class: summary?.class ?? null,
  };
}

/**
 * The matrices of every (configuration, skill) whose results hold a variant arm; empty when no
 * skill has variants (the with/without report says everything then).
 */
export function unadjustedArmMatrices(
  results: readonly RunResult[],
  alpha = 0.05,
): UnadjustedArmMatrix[] {
  const profiles = new Map<string, RunResult[]>();
  for (const result of results) {
    const key = JSON.stringify([result.config, result.skill]);
    profiles.set(key, [...(profiles.get(key) ?? []), result]);
  }
  const unadjusted: Array<
    Omit<ArmMatrix, "pairs"> & { pairs: Omit<ArmPairComparison, "q" | "classFdr">[] }
  > = [];
  for (const [key, runs] of [...profiles.entries()].sort(([left], [right]) =>
    left.localeCompare(right),
  )) {
    if (!runs.some((run) => variantName(run.arm) !== undefined)) continue;
    const [config, skill] = JSON.parse(key) as [string, string];
    const arms = [...new Set<Arm>(["without", "with", ...runs.map((run) => run.arm)])].sort(
      (left, right) => {
        const [x, xName] = armOrder(left);
        const [y, yName] = armOrder(right);
        return x - y || xName.localeCompare(yName);
      },
    );
    const byRequirement = new Map<string, Map<Arm, RunDetail[]>>();
    for (const run of [...runs].sort((left, right) => left.repeat - right.repeat)) {
      const arms = byRequirement.get(run.requirement) ?? new Map<Arm, RunDetail[]>();
      arms.set(run.arm, [...(arms.get(run.arm) ?? []), runDetail(run)]);
      byRequirement.set(run.requirement, arms);
    }
    const sorted = new Map([...byRequirement.entries()].sort(([x], [y]) => x.localeCompare(y)));
    const pairs: Omit<ArmPairComparison, "q" | "classFdr">[] = [];
    for (let left = 0; left < arms.length; left += 1) {
      for (let right = left + 1; right < arms.length; right += 1) {
        pairs.push(comparePair(arms[left] as Arm, arms[right] as Arm, sorted, alpha));
      }
    }
    unadjusted.push({
      config,
      skill,
      arms: arms.map((arm) => ({ arm, label: armLabel(arm) })),
      pairs,
    });
  }
  return unadjusted;
}

/** An arm pair's own test, or the profile's when the pair is with versus none. */
export function isProfilePair(pair: { readonly a: Arm; readonly b: Arm }): boolean {
  return pair.a === "without" && pair.b === "with";
}

export type UnadjustedArmMatrix = Omit<ArmMatrix, "pairs"> & {
  readonly pairs: ReadonlyArray<Omit<ArmPairComparison, "q" | "classFdr">>;
};

interface Adjusted {
  readonly q: number | null;
  readonly classFdr: SkillClass | null;
}

/** Put q-values onto the matrices; `fdrOf` answers for each tested pair (the family's choice). */
export function adjustArmMatrices(
  matrices: readonly UnadjustedArmMatrix[],
  fdrOf: (
    matrix: UnadjustedArmMatrix,
    pair: Omit<ArmPairComparison, "q" | "classFdr">,
  ) => Adjusted | undefined,
): ArmMatrix[] {
  return matrices.map((matrix) => ({
    ...matrix,
    pairs: matrix.pairs.map((pair) => {
      const adjusted = pair.p === null ? undefined : fdrOf(matrix, pair);
      return { ...pair, q: adjusted?.q ?? null, classFdr: adjusted?.classFdr ?? null };
    }),
  }));
}

/**
 * The matrices on their own (outside a report): one BH family over every tested pair of every
 * matrix, each test once, with the guard of `classUnderFdr`.
 */
export function armMatrices(results: readonly RunResult[], alpha = 0.05): ArmMatrix[] {
  const matrices = unadjustedArmMatrices(results, alpha);
  const tested = matrices.flatMap((matrix) => matrix.pairs.filter((pair) => pair.p !== null));
  const q = benjaminiHochberg(tested.map((pair) => pair.p as number));
  const fdr = new Map<object, Adjusted>(
    tested.map((pair, index) => {
      const value = q[index] as number;
      return [pair, { q: value, classFdr: classUnderFdr(pair.delta, value, alpha) }];
    }),
  );
  return adjustArmMatrices(matrices, (_, pair) => fdr.get(pair));
}

/** The pairs that join the report's BH family (every tested pair but with versus none). */
export function familyPairs(
  matrices: readonly UnadjustedArmMatrix[],
): Array<Omit<ArmPairComparison, "q" | "classFdr">> {
  return matrices.flatMap((matrix) =>
    matrix.pairs.filter((pair) => pair.p !== null && !isProfilePair(pair)),
  );
}
