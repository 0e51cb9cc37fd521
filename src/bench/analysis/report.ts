/**
 * Verdicts and the aggregate views of protocol A.6–A.7, computed from the results store alone
 * (nothing is re-run). Every figure names the run keys it came from, so a reader can trace a
 * verdict back to trajectories.
 *
 * Nothing broken may look like a result: every run's flags are judged with the one vocabulary
 * (`env/verifier/flags.ts`), a pair enters the statistics only when `pairMeasurement` says it
 * is measurable, and a requirement or skill that could not be measured — flags, or every attempt
 * lost to infrastructure — stays in the report with its reason instead of vanishing or passing
 * for "Ineffective, p = 1".
 */
import {
  type FlagEffect,
  flagDefinition,
  flagsForceZero,
  pairMeasurement,
  RUN_FLAGS,
  type RunFlag,
} from "../../env/index.js";
import {
  classify,
  pearson,
  type SignFlipMethod,
  type SkillClass,
  spearman,
  summarizeDeltas,
} from "../../stats/index.js";
import type { RunManifest } from "../store/manifest.js";
import {
  type Arm,
  type AttemptRecord,
  formatRunKey,
  type RunKey,
  type RunResult,
  type VerifierRecord,
} from "../store/results.js";
import { firstLine, tellingLines } from "./excerpt.js";

/** The JSON report's format; bumped when a field changes meaning or goes away. */
export const REPORT_FORMAT = "skillsmith-report/1";

/**
 * Flags that mean a time limit was hit: the agent's, or the verifier's on the agent's code. The
 * protocol's sensitivity analysis (A.6) removes the pairs carrying one. Typed as `RunFlag`, so a
 * renamed flag fails to compile here.
 */
const TIMEOUT_FLAGS: readonly RunFlag[] = ["agent-timeout", "timeout"];
const WEAK_VERIFIER_FLAG: RunFlag = "weak-verifier";

/** One stored run as the report shows it. */
export interface RunDetail {
  readonly key: string;
  readonly arm: Arm;
  readonly repeat: number;
  readonly status: RunResult["status"];
  /** The pass ratio as stored. */
  readonly passRatio: number;
  /** What entered the arm's mean: 0 when a flag forces it (`flagsForceZero`), else `passRatio`. */
  readonly score: number;
  readonly passed: number;
  readonly total: number;
  /** The run's flags (`agent-timeout` added for a stored timeout that lacks it). */
  readonly flags: readonly string[];
  readonly attempts: number;
  /** The verifier's stored output, exit code, duration, source and evidence (full, as stored). */
  readonly verifier?: VerifierRecord;
  /** The telling lines of the verifier's output (bounded), for a run with a flag; else empty. */
  readonly excerpt: readonly string[];
}

/** A run key with no result: every attempt was lost to infrastructure (never scored). */
export interface LostRun {
  readonly key: string;
  readonly arm: Arm;
  readonly repeat: number;
  readonly attempts: number;
  /** The last attempt's error, first line. */
  readonly lastError: string;
}

/**
 * Whether a requirement's pair enters the verdict. `cause` says why not: its runs' flags, every
 * attempt of an arm lost to infrastructure, or an arm not run yet.
 */
export type RequirementMeasurement =
  | { readonly measurable: true }
  | {
      readonly measurable: false;
      readonly cause: "flags" | "infrastructure" | "not-run";
      readonly reason: string;
      readonly flags: readonly string[];
    };

export interface RequirementOutcome {
  readonly id: string;
  /** Mean score over repeats; null when the arm has no stored result. */
  readonly without: number | null;
  readonly with: number | null;
  /** d_i = 100·(y¹ − y⁰); null when the pair is not measurable. */
  readonly delta: number | null;
  readonly measurement: RequirementMeasurement;
  /** Every flag of every run of the pair, in the vocabulary's order. */
  readonly flags: readonly string[];
  /** True when any run of the pair hit a time limit (the agent's or the verifier's). */
  readonly timeout: boolean;
  /** The verifier check found this verifier weak; the pair still counts. */
  readonly weakVerifier: boolean;
  /** Both arms 100%, or the same set of passed checks in every repeat. */
  readonly identical: boolean;
  /** Required files (File Operations) missing after the assisted run but present after the unassisted one. */
  readonly misplaced: readonly string[];
  readonly runs: { readonly without: readonly string[]; readonly with: readonly string[] };
  readonly detail: { readonly without: readonly RunDetail[]; readonly with: readonly RunDetail[] };
  /** Run keys of this requirement with no result, every attempt lost to infrastructure. */
  readonly lost: readonly LostRun[];
}

export interface TestVerdict {
  readonly p: number | null;
  readonly class: SkillClass | null;
}

/** How often one flag occurs: in how many runs, and in how many requirements (pairs). */
export interface FlagCount {
  readonly flag: string;
  readonly label: string;
  readonly effect: FlagEffect;
  readonly runs: number;
  readonly requirements: number;
}

export interface UnmeasuredRequirement {
  readonly requirement: string;
  readonly cause: "flags" | "infrastructure" | "not-run";
  readonly reason: string;
  readonly flags: readonly string[];
}

export interface Profile {
  readonly skill: string;
  readonly config: string;
  readonly requirements: readonly RequirementOutcome[];
  /** Measurable pairs entering the statistics. */
  readonly n: number;
  /** Requirements known for this skill and configuration, how many were measurable, why not. */
  readonly measured: {
    readonly total: number;
    readonly measurable: number;
    readonly unmeasured: readonly UnmeasuredRequirement[];
  };
  /** Why there is no verdict: nothing was measurable. null when there is one. */
  readonly unscorable: string | null;
  readonly without: number | null;
  readonly with: number | null;
  readonly delta: number | null;
  /** Exact two-sided sign-flip p (the primary test). */
  readonly p: number | null;
  /**
   * How p was computed and its guaranteed error (|p − exact p| ≤ error; 0 for the exact methods;
   * null for Monte Carlo, which only has a standard error): see `signFlipTest`.
   */
  readonly pMethod?: { readonly method: SignFlipMethod; readonly error: number | null } | null;
  readonly class: SkillClass | null;
  readonly sensitivity: {
    readonly ttest: TestVerdict;
    readonly wilcoxon: TestVerdict;
    readonly withoutTimeouts: TestVerdict & { readonly n: number; readonly delta: number | null };
    /** Names of the sensitivity analyses whose class differs from the primary class. */
    readonly disagreements: readonly string[];
  };
  /** Per flag, over this profile's runs (vocabulary order). */
  readonly flagCounts: readonly FlagCount[];
  /** Requirements whose verifier is weak (counted in the verdict). */
  readonly weakVerifiers: readonly string[];
  /** Run keys lost to infrastructure (no result). */
  readonly lostRuns: number;
  /** Share of assisted runs in which the agent used the skill; null when the harness cannot tell. */
  readonly activation_rate: number | null;
  readonly notes: readonly string[];
}

export interface ArmUsage {
  readonly runs: number;
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
  readonly agentMs: number;
  readonly verifierMs: number;
  readonly totalMs: number;
}

export interface ConfigSummary {
  readonly config: string;
  readonly agent?: string;
  readonly model?: string;
  readonly skills: number;
  /** Measurable pairs. */
  readonly pairs: number;
  /** Pairs left out of the verdicts (not measurable). */
  readonly unmeasuredPairs: number;
  readonly without: number | null;
  readonly with: number | null;
  readonly delta: number | null;
  readonly classes: Readonly<Record<SkillClass, number>>;
  /** Skills with nothing measurable (no class). */
  readonly unscorable: number;
  readonly usage: Readonly<Record<Arm, ArmUsage>>;
}

export interface PairKey {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
}

export interface BenchReport {
  readonly format: typeof REPORT_FORMAT;
  readonly suite?: { readonly name: string; readonly path: string };
  /** The `--skill` / `--requirement` filter the report was built with, when there was one. */
  readonly filter?: {
    readonly skills?: readonly string[];
    readonly requirements?: readonly string[];
  };
  readonly profiles: readonly Profile[];
  readonly configs: readonly ConfigSummary[];
  readonly pooled: {
    readonly pairs: number;
    readonly without: number | null;
    readonly with: number | null;
    readonly delta: number | null;
  };
  /** Verdicts use measurable pairs only: how many there are, and every pair left out with why. */
  readonly measurement: {
    readonly pairs: number;
    readonly measurable: number;
    readonly unmeasured: ReadonlyArray<PairKey & Omit<UnmeasuredRequirement, "requirement">>;
    /** Run keys with no result because every attempt was lost to infrastructure. */
    readonly lostRuns: number;
  };
  /** Skills × configurations with nothing measurable, and why. */
  readonly unscorable: ReadonlyArray<{
    readonly config: string;
    readonly skill: string;
    readonly reason: string;
  }>;
  /** Per flag, over every run of the report (vocabulary order). */
  readonly flagCounts: readonly FlagCount[];
  readonly pairs: {
    /** Measurable pairs; the shares below are of these. */
    readonly total: number;
    readonly identical: {
      readonly count: number;
      readonly share: number | null;
      readonly keys: readonly PairKey[];
    };
    readonly largeChanges: {
      readonly threshold: number;
      readonly count: number;
      readonly keys: ReadonlyArray<PairKey & { readonly deltaY: number }>;
    };
    readonly misplacedDeliverables: {
      readonly count: number;
      readonly keys: ReadonlyArray<
        PairKey & { readonly missing: readonly string[]; readonly deltaY: number | null }
      >;
    };
    /** Measurable pairs with a timeout (agent or verifier) in either arm. */
    readonly timeouts: number;
  };
  readonly correlations: ReadonlyArray<{
    readonly configs: readonly [string, string];
    readonly skills: number;
    readonly pearson: number | null;
    readonly spearman: number | null;
  }>;
  readonly signChanges: ReadonlyArray<{
    readonly configs: readonly [string, string];
    readonly compared: number;
    readonly count: number;
    readonly skills: readonly string[];
  }>;
  readonly runs: {
    readonly scored: number;
    /** Attempts lost to infrastructure (re-run, never scored). */
    readonly infraAttempts: number;
  };
}

export interface BuildReportOptions {
  readonly alpha?: number;
  /** |Δy| at or above which a pair counts as a large change (default 0.5). */
  readonly largeChange?: number;
  readonly manifest?: RunManifest;
  /**
   * Every attempt from the store. Infrastructure failures are counted, and a key with no result
   * whose attempts all failed shows as lost (its requirement, or its skill, unmeasured).
   */
  readonly attempts?: readonly AttemptRecord[];
  /** Recorded in the report when the results were filtered. */
  readonly filter?: BenchReport["filter"];
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function passedSet(result: RunResult): string {
  return JSON.stringify(
    result.checks
      .filter((check) => check.status === "pass")
      .map((check) => check.name)
      .sort(),
  );
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}

const FLAG_ORDER: ReadonlyMap<string, number> = new Map(
  RUN_FLAGS.map((definition, index) => [definition.id, index]),
);

/** Flags in the vocabulary's order; unknown flags after them, by name. */
function sortFlags(flags: Iterable<string>): string[] {
  const order = (flag: string) => FLAG_ORDER.get(flag) ?? RUN_FLAGS.length;
  return [...new Set(flags)].sort(
    (left, right) => order(left) - order(right) || left.localeCompare(right),
  );
}

/** A stored run's flags; a timeout stored without its flag (older writers) gets it. */
function runFlags(result: RunResult): string[] {
  const flags = [...result.flags];
  if (result.status === "timeout" && !flags.includes("agent-timeout")) flags.push("agent-timeout");
  return sortFlags(flags);
}

function runDetail(result: RunResult): RunDetail {
  const flags = runFlags(result);
  const flagged = flags.length > 0;
  return {
    key: formatRunKey(result),
    arm: result.arm,
    repeat: result.repeat,
    status: result.status,
    passRatio: result.passRatio,
    // Defensive: a producer that flags a run but forgets to zero it cannot lift the arm's mean.
    score: flagsForceZero(flags) ? 0 : result.passRatio,
    passed: result.passed,
    total: result.total,
    flags,
    attempts: result.attempts,
    ...(result.verifier === undefined ? {} : { verifier: result.verifier }),
    excerpt:
      flagged && result.verifier !== undefined && result.verifier.output !== ""
        ? tellingLines(result.verifier.output)
        : [],
  };
}

/**
 * Whether a run deserves its own explanation in a report: a flag that changes its score or the
 * pair's measurement, or evidence. Note-only flags (weak verifier) are shown on the requirement.
 */
export function runNeedsExplanation(run: RunDetail): boolean {
  return (
    run.flags.some((flag) => flagDefinition(flag).effect !== "note") ||
    (run.verifier?.evidence ?? []).length > 0
  );
}

interface Tested {
  readonly delta: number;
  readonly p: number;
  readonly pMethod: { readonly method: SignFlipMethod; readonly error: number | null };
  readonly class: SkillClass;
  readonly ttest: TestVerdict;
  readonly wilcoxon: TestVerdict;
}

function test(deltas: readonly number[], alpha: number): Tested | undefined {
  if (deltas.length === 0) return undefined;
  const summary = summarizeDeltas(deltas, alpha);
  const verdict = (p: number): TestVerdict =>
    Number.isFinite(p)
      ? { p, class: classify({ delta: summary.delta, p }, alpha) }
      : { p: null, class: null };
  return {
    delta: summary.delta,
    p: summary.signflip.p,
    pMethod: { method: summary.signflip.method, error: summary.signflip.error ?? null },
    class: summary.class,
    ttest: verdict(summary.ttest.p),
    wilcoxon: verdict(summary.wilcoxon.p),
  };
}

/**
 * The flags an arm brings to `pairMeasurement`, over its repeats: every flag of every repeat,
 * except that a verifier-side flag counts only when *every* repeat of the arm has one. With one
 * repeat this is the run's flags. With several, one repeat whose verifier worked proves the
 * verifier works in that arm, so a skill whose own arm broke the verifier cannot get the pair
 * dropped because one unassisted repeat happened to break it too.
 */
function armMeasurementFlags(runs: readonly RunDetail[]): string[] {
  const isVerifierSide = (flag: string) => flagDefinition(flag).effect === "verifier-side";
  const everyRepeat = runs.length > 0 && runs.every((run) => run.flags.some(isVerifierSide));
  return sortFlags(
    runs.flatMap((run) => run.flags).filter((flag) => everyRepeat || !isVerifierSide(flag)),
  );
}

function lostOf(lost: readonly LostRun[], arm: Arm): LostRun[] {
  return lost.filter((run) => run.arm === arm);
}

function lostReason(where: string, lost: readonly LostRun[]): string {
  const attempts = lost.reduce((sum, run) => sum + run.attempts, 0);
  const last = lost[lost.length - 1]?.lastError ?? "";
  return `every attempt failed for infrastructure in ${where} (${attempts} attempt${attempts === 1 ? "" : "s"}${last === "" ? "" : `; last: ${last}`})`;
}

function measure(
  without: readonly RunDetail[],
  assisted: readonly RunDetail[],
  lost: readonly LostRun[],
): RequirementMeasurement {
  const missing: Arm[] = [];
  if (without.length === 0) missing.push("without");
  if (assisted.length === 0) missing.push("with");
  if (missing.length > 0) {
    const lostArms = missing.filter((arm) => lost.some((run) => run.arm === arm));
    if (lostArms.length > 0) {
      const lastErrors = new Set(lostArms.map((arm) => lostOf(lost, arm).at(-1)?.lastError));
      // Both arms lost to the same error (a harness that cannot start): say it once.
      const reason =
        lostArms.length === 2 && lastErrors.size === 1
          ? lostReason("both arms", lost)
          : lostArms.map((arm) => lostReason(`${arm} arm`, lostOf(lost, arm))).join("; ");
      return { measurable: false, cause: "infrastructure", reason, flags: [] };
    }
    return {
      measurable: false,
      cause: "not-run",
      reason: `${missing.join(" and ")} arm${missing.length === 1 ? "" : "s"} not run yet`,
      flags: [],
    };
  }
  const verdict = pairMeasurement(armMeasurementFlags(without), armMeasurementFlags(assisted));
  if (verdict.measurable) return { measurable: true };
  return { measurable: false, cause: "flags", reason: verdict.reason, flags: verdict.flags };
}

function requirementOutcome(
  id: string,
  runs: readonly RunResult[],
  lost: readonly LostRun[],
): RequirementOutcome {
  const byArm = (arm: Arm) =>
    runs.filter((run) => run.arm === arm).sort((left, right) => left.repeat - right.repeat);
  const without = byArm("without");
  const assisted = byArm("with");
  const detail = { without: without.map(runDetail), with: assisted.map(runDetail) };
  const measurement = measure(detail.without, detail.with, lost);
  const y0 = mean(detail.without.map((run) => run.score));
  const y1 = mean(detail.with.map((run) => run.score));
  const repeats = new Set([...without, ...assisted].map((run) => run.repeat));
  let identical = y0 === 1 && y1 === 1;
  // Same passed checks but different scores happens when a flag zeroed one arm (tampered).
  if (!identical && without.length > 0 && assisted.length > 0 && y0 === y1) {
    identical = [...repeats].every((repeat) => {
      const left = without.find((run) => run.repeat === repeat);
      const right = assisted.find((run) => run.repeat === repeat);
      return left !== undefined && right !== undefined && passedSet(left) === passedSet(right);
    });
  }
  const misplaced = new Set<string>();
  for (const run of assisted) {
    const unassisted = without.find((candidate) => candidate.repeat === run.repeat);
    if (unassisted === undefined) continue;
    for (const [path, exists] of Object.entries(run.requiredFiles)) {
      if (!exists && unassisted.requiredFiles[path] === true) misplaced.add(path);
    }
  }
  const flags = sortFlags([...detail.without, ...detail.with].flatMap((run) => run.flags));
  return {
    id,
    without: y0,
    with: y1,
    delta: measurement.measurable && y0 !== null && y1 !== null ? 100 * (y1 - y0) : null,
    measurement,
    flags,
    timeout: flags.some((flag) => (TIMEOUT_FLAGS as readonly string[]).includes(flag)),
    weakVerifier: flags.includes(WEAK_VERIFIER_FLAG),
    identical,
    misplaced: [...misplaced].sort(),
    runs: { without: without.map(formatRunKey), with: assisted.map(formatRunKey) },
    detail,
    lost,
  };
}

function armUsage(runs: readonly RunResult[]): ArmUsage {
  return {
    runs: runs.length,
    inputTokens: runs.reduce((sum, run) => sum + run.usage.inputTokens, 0),
    cachedInputTokens: runs.reduce((sum, run) => sum + run.usage.cachedInputTokens, 0),
    outputTokens: runs.reduce((sum, run) => sum + run.usage.outputTokens, 0),
    costUsd: runs.reduce((sum, run) => sum + run.usage.costUsd, 0),
    agentMs: runs.reduce((sum, run) => sum + run.agentMs, 0),
    verifierMs: runs.reduce((sum, run) => sum + run.verifierMs, 0),
    totalMs: runs.reduce((sum, run) => sum + run.totalMs, 0),
  };
}

/** Flag counts over (requirement id, runs) groups; requirement ids must be unique in the input. */
function countFlags(
  groups: ReadonlyArray<{ readonly id: string; readonly runs: readonly RunDetail[] }>,
): FlagCount[] {
  const runs = new Map<string, number>();
  const requirements = new Map<string, Set<string>>();
  for (const group of groups) {
    for (const run of group.runs) {
      for (const flag of run.flags) {
        runs.set(flag, (runs.get(flag) ?? 0) + 1);
        const seen = requirements.get(flag) ?? new Set<string>();
        seen.add(group.id);
        requirements.set(flag, seen);
      }
    }
  }
  return sortFlags(runs.keys()).map((flag) => {
    const definition = flagDefinition(flag);
    return {
      flag,
      label: definition.label,
      effect: definition.effect,
      runs: runs.get(flag) ?? 0,
      requirements: requirements.get(flag)?.size ?? 0,
    };
  });
}

/** Why a profile has no verdict: its requirements' reasons, grouped, each naming its requirements. */
function unscorableReason(unmeasured: readonly UnmeasuredRequirement[]): string {
  if (unmeasured.length === 0) return "no requirement has been run";
  const byReason = groupBy(unmeasured, (item) => item.reason);
  if (byReason.size === 1) return `nothing measurable: ${unmeasured[0]?.reason ?? ""}`;
  return `nothing measurable: ${[...byReason.entries()]
    .map(([reason, items]) => `${reason} (${items.map((item) => item.requirement).join(", ")})`)
    .join("; ")}`;
}

/** Keys with no result whose every attempt failed for infrastructure, by requirement. */
function lostRuns(
  results: readonly RunResult[],
  attempts: readonly AttemptRecord[],
): Map<string, LostRun[]> {
  const keyOf = (key: RunKey) =>
    JSON.stringify([key.config, key.skill, key.requirement, key.arm, key.repeat]);
  const scored = new Set(results.map(keyOf));
  const failures = groupBy(
    attempts.filter((attempt) => attempt.outcome === "infra_error" && !scored.has(keyOf(attempt))),
    keyOf,
  );
  const byRequirement = new Map<string, LostRun[]>();
  for (const group of failures.values()) {
    const last = group[group.length - 1] as AttemptRecord;
    const requirementKey = JSON.stringify([last.config, last.skill, last.requirement]);
    const list = byRequirement.get(requirementKey) ?? [];
    list.push({
      key: formatRunKey(last),
      arm: last.arm,
      repeat: last.repeat,
      attempts: group.length,
      lastError: firstLine(last.error ?? "no error recorded"),
    });
    byRequirement.set(requirementKey, list);
  }
  for (const list of byRequirement.values()) {
    list.sort((left, right) => left.arm.localeCompare(right.arm) || left.repeat - right.repeat);
  }
  return byRequirement;
}

function profileOf(
  config: string,
  skill: string,
  runs: readonly RunResult[],
  lost: ReadonlyMap<string, LostRun[]>,
  requirementIds: readonly string[],
  alpha: number,
): Profile {
  const byRequirement = groupBy(runs, (run) => run.requirement);
  const requirements = requirementIds
    .map((id) =>
      requirementOutcome(
        id,
        byRequirement.get(id) ?? [],
        lost.get(JSON.stringify([config, skill, id])) ?? [],
      ),
    )
    .sort((left, right) => left.id.localeCompare(right.id, "en", { numeric: true }));
  const complete = requirements.filter((outcome) => outcome.delta !== null);
  const deltas = complete.map((outcome) => outcome.delta as number);
  const primary = test(deltas, alpha);
  const noTimeouts = complete.filter((outcome) => !outcome.timeout);
  const withoutTimeouts = test(
    noTimeouts.map((outcome) => outcome.delta as number),
    alpha,
  );
  const disagreements: string[] = [];
  if (primary !== undefined) {
    if (primary.ttest.class !== null && primary.ttest.class !== primary.class)
      disagreements.push("paired t-test");
    if (primary.wilcoxon.class !== null && primary.wilcoxon.class !== primary.class)
      disagreements.push("Wilcoxon signed-rank");
    if (
      withoutTimeouts !== undefined &&
      withoutTimeouts.class !== primary.class &&
      noTimeouts.length !== complete.length
    ) {
      disagreements.push("sign-flip without timeouts");
    }
  }
  const assisted = runs.filter((run) => run.arm === "with" && run.skillActivated !== null);
  const activation =
    assisted.length === 0
      ? null
      : assisted.filter((run) => run.skillActivated === true).length / assisted.length;
  const unmeasured: UnmeasuredRequirement[] = requirements.flatMap((outcome) =>
    outcome.measurement.measurable
      ? []
      : [
          {
            requirement: outcome.id,
            cause: outcome.measurement.cause,
            reason: outcome.measurement.reason,
            flags: outcome.measurement.flags,
          },
        ],
  );
  const weakVerifiers = requirements
    .filter((outcome) => outcome.weakVerifier)
    .map((outcome) => outcome.id);
  const lostCount = requirements.reduce((sum, outcome) => sum + outcome.lost.length, 0);
  const unscorable = complete.length === 0 ? unscorableReason(unmeasured) : null;

  const notes: string[] = [];
  if (activation === 0) {
    notes.push(
      "the agent never activated the skill in the assisted arm: the skill cannot have helped, and any difference is noise or the skill's mere presence",
    );
  }
  if (unmeasured.length > 0 && unscorable === null) {
    notes.push(
      `left out of the verdict (not measurable): ${unmeasured.map((item) => `${item.requirement} (${item.reason})`).join(", ")}`,
    );
  }
  const weakMeasured = weakVerifiers.filter((id) => complete.some((outcome) => outcome.id === id));
  if (weakMeasured.length > 0) {
    notes.push(
      `weak verifier (passes at least half its checks on the untouched repository) on ${weakMeasured.join(", ")}: counted in the verdict, where it can only shrink a difference between the arms`,
    );
  }
  const partlyLost = requirements.filter(
    (outcome) => outcome.measurement.measurable && outcome.lost.length > 0,
  );
  if (partlyLost.length > 0) {
    notes.push(
      `repeats lost to infrastructure, left out of their arm's mean: ${partlyLost.flatMap((outcome) => outcome.lost.map((run) => run.key)).join(", ")}`,
    );
  }
  if (disagreements.length > 0)
    notes.push(`sensitivity disagrees with the primary class: ${disagreements.join(", ")}`);

  return {
    skill,
    config,
    requirements,
    n: complete.length,
    measured: {
      total: requirements.length,
      measurable: complete.length,
      unmeasured,
    },
    unscorable,
    without: mean(complete.map((outcome) => outcome.without as number)),
    with: mean(complete.map((outcome) => outcome.with as number)),
    delta: primary?.delta ?? null,
    p: primary?.p ?? null,
    pMethod: primary?.pMethod ?? null,
    class: primary?.class ?? null,
    sensitivity: {
      ttest: primary?.ttest ?? { p: null, class: null },
      wilcoxon: primary?.wilcoxon ?? { p: null, class: null },
      withoutTimeouts: {
        n: noTimeouts.length,
        delta: withoutTimeouts?.delta ?? null,
        p: withoutTimeouts?.p ?? null,
        class: withoutTimeouts?.class ?? null,
      },
      disagreements,
    },
    flagCounts: countFlags(
      requirements.map((outcome) => ({
        id: outcome.id,
        runs: [...outcome.detail.without, ...outcome.detail.with],
      })),
    ),
    weakVerifiers,
    lostRuns: lostCount,
    activation_rate: activation,
    notes,
  };
}

/**
 * The report of a run directory's results (and its attempts: keys whose every attempt was lost
 * to infrastructure appear as unmeasured, their skill as unscorable when nothing else is left).
 */
export function buildReport(
  results: readonly RunResult[],
  options: BuildReportOptions = {},
): BenchReport {
  const alpha = options.alpha ?? 0.05;
  const threshold = options.largeChange ?? 0.5;
  const attempts = options.attempts ?? [];
  const lost = lostRuns(results, attempts);

  // Every (config, skill) and its requirement ids, from results and from attempts alike.
  const requirementIds = new Map<string, Set<string>>();
  const note = (key: { config: string; skill: string; requirement: string }) => {
    const profileKey = JSON.stringify([key.config, key.skill]);
    const ids = requirementIds.get(profileKey) ?? new Set<string>();
    ids.add(key.requirement);
    requirementIds.set(profileKey, ids);
  };
  for (const result of results) note(result);
  for (const attempt of attempts) note(attempt);

  const byProfile = groupBy(results, (run) => JSON.stringify([run.config, run.skill]));
  const profiles: Profile[] = [...requirementIds.entries()].map(([key, ids]) => {
    const [config, skill] = JSON.parse(key) as [string, string];
    return profileOf(config, skill, byProfile.get(key) ?? [], lost, [...ids], alpha);
  });
  profiles.sort((left, right) =>
    left.config === right.config
      ? left.skill.localeCompare(right.skill)
      : left.config.localeCompare(right.config),
  );

  const configIds = [...new Set(profiles.map((profile) => profile.config))];
  const configs: ConfigSummary[] = configIds.map((config) => {
    const own = profiles.filter((profile) => profile.config === config);
    const pairs = own.flatMap((profile) =>
      profile.requirements.filter((outcome) => outcome.delta !== null),
    );
    const y0 = mean(pairs.map((outcome) => outcome.without as number));
    const y1 = mean(pairs.map((outcome) => outcome.with as number));
    const configuration = options.manifest?.configurations.find(
      (candidate) => candidate.id === config,
    );
    const runs = results.filter((run) => run.config === config);
    return {
      config,
      ...(configuration === undefined ? {} : { agent: configuration.agent }),
      ...(configuration?.model === undefined ? {} : { model: configuration.model }),
      skills: own.length,
      pairs: pairs.length,
      unmeasuredPairs: own.reduce((sum, profile) => sum + profile.measured.unmeasured.length, 0),
      without: y0,
      with: y1,
      delta: y0 === null || y1 === null ? null : 100 * (y1 - y0),
      classes: {
        golden: own.filter((profile) => profile.class === "golden").length,
        harmful: own.filter((profile) => profile.class === "harmful").length,
        ineffective: own.filter((profile) => profile.class === "ineffective").length,
      },
      unscorable: own.filter((profile) => profile.unscorable !== null).length,
      usage: {
        without: armUsage(runs.filter((run) => run.arm === "without")),
        with: armUsage(runs.filter((run) => run.arm === "with")),
      },
    };
  });

  const allPairs = profiles.flatMap((profile) =>
    profile.requirements
      .filter((outcome) => outcome.delta !== null)
      .map((outcome) => ({ profile, outcome })),
  );
  const pooledWithout = mean(allPairs.map(({ outcome }) => outcome.without as number));
  const pooledWith = mean(allPairs.map(({ outcome }) => outcome.with as number));
  const pairKey = (profile: Profile, outcome: RequirementOutcome): PairKey => ({
    config: profile.config,
    skill: profile.skill,
    requirement: outcome.id,
  });
  const identical = allPairs.filter(({ outcome }) => outcome.identical);
  const large = allPairs.filter(
    ({ outcome }) => Math.abs((outcome.delta as number) / 100) >= threshold - 1e-12,
  );
  const misplaced = profiles.flatMap((profile) =>
    profile.requirements
      .filter((outcome) => outcome.misplaced.length > 0)
      .map((outcome) => ({
        ...pairKey(profile, outcome),
        missing: outcome.misplaced,
        deltaY: outcome.delta === null ? null : outcome.delta / 100,
      })),
  );

  const correlations: BenchReport["correlations"][number][] = [];
  const signChanges: BenchReport["signChanges"][number][] = [];
  for (let left = 0; left < configIds.length; left += 1) {
    for (let right = left + 1; right < configIds.length; right += 1) {
      const a = configIds[left] as string;
      const b = configIds[right] as string;
      const shared: Array<{ skill: string; x: number; y: number }> = [];
      for (const profile of profiles.filter((candidate) => candidate.config === a)) {
        const other = profiles.find(
          (candidate) => candidate.config === b && candidate.skill === profile.skill,
        );
        if (profile.delta !== null && other?.delta !== null && other?.delta !== undefined) {
          shared.push({ skill: profile.skill, x: profile.delta, y: other.delta });
        }
      }
      if (shared.length >= 3) {
        const x = shared.map((item) => item.x);
        const y = shared.map((item) => item.y);
        correlations.push({
          configs: [a, b],
          skills: shared.length,
          pearson: finiteOrNull(pearson(x, y)),
          spearman: finiteOrNull(spearman(x, y)),
        });
      }
      const changed = shared.filter((item) => item.x * item.y < 0).map((item) => item.skill);
      signChanges.push({
        configs: [a, b],
        compared: shared.length,
        count: changed.length,
        skills: changed,
      });
    }
  }

  const unmeasured = profiles.flatMap((profile) =>
    profile.measured.unmeasured.map(({ requirement, ...rest }) => ({
      config: profile.config,
      skill: profile.skill,
      requirement,
      ...rest,
    })),
  );
  return {
    format: REPORT_FORMAT,
    ...(options.manifest === undefined
      ? {}
      : { suite: { name: options.manifest.suite.name, path: options.manifest.suite.path } }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    profiles,
    configs,
    pooled: {
      pairs: allPairs.length,
      without: pooledWithout,
      with: pooledWith,
      delta:
        pooledWithout === null || pooledWith === null ? null : 100 * (pooledWith - pooledWithout),
    },
    measurement: {
      pairs: allPairs.length + unmeasured.length,
      measurable: allPairs.length,
      unmeasured,
      lostRuns: [...lost.values()].reduce((sum, list) => sum + list.length, 0),
    },
    unscorable: profiles.flatMap((profile) =>
      profile.unscorable === null
        ? []
        : [{ config: profile.config, skill: profile.skill, reason: profile.unscorable }],
    ),
    flagCounts: countFlags(
      profiles.flatMap((profile) =>
        profile.requirements.map((outcome) => ({
          id: JSON.stringify([profile.config, profile.skill, outcome.id]),
          runs: [...outcome.detail.without, ...outcome.detail.with],
        })),
      ),
    ),
    pairs: {
      total: allPairs.length,
      identical: {
        count: identical.length,
        share: allPairs.length === 0 ? null : identical.length / allPairs.length,
        keys: identical.map(({ profile, outcome }) => pairKey(profile, outcome)),
      },
      largeChanges: {
        threshold,
        count: large.length,
        keys: large.map(({ profile, outcome }) => ({
          ...pairKey(profile, outcome),
          deltaY: (outcome.delta as number) / 100,
        })),
      },
      misplacedDeliverables: { count: misplaced.length, keys: misplaced },
      timeouts: allPairs.filter(({ outcome }) => outcome.timeout).length,
    },
    correlations,
    signChanges,
    runs: {
      scored: results.length,
      infraAttempts: attempts.filter((attempt) => attempt.outcome === "infra_error").length,
    },
  };
}
