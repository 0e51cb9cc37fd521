/**
 * One skill × configuration's utility profile (protocol A.6): each requirement's pair judged
 * measurable or not, its delta, and the exact test over the measurable ones.
 *
 * One file although past 400 lines: every function here serves `profileOf`'s single decision of
 * which pairs enter the verdict, and reads best beside the others that decide it.
 */
import {
  flagDefinition,
  flagsForceZero,
  pairMeasurement,
  RUN_FLAGS,
  type RunFlag,
} from "../../env/verifier/flags.js";
import {
  classify,
  detectableEffect,
  type SignFlipMethod,
  type SkillClass,
  summarizeDeltas,
} from "../../stats/index.js";
import {
  type Arm,
  type AttemptRecord,
  formatRunKey,
  type RunKey,
  type RunResult,
} from "../store/results.js";
import { labelCanaryLines } from "./canaries.js";
import { firstLine, tellingLines } from "./excerpt.js";
import type {
  ArmUsage,
  FlagCount,
  LostRun,
  Profile,
  RequirementMeasurement,
  RequirementOutcome,
  RunDetail,
  TestVerdict,
  UnmeasuredRequirement,
} from "./report-types.js";
import { repeatVariability, scoreSd } from "./statistics.js";

/**
 * Flags that mean a time limit was hit: the agent's, or the verifier's on the agent's code. The
 * protocol's sensitivity analysis (A.6) removes the pairs carrying one. Typed as `RunFlag`, so a
 * renamed flag fails to compile here.
 */
const TIMEOUT_FLAGS: readonly RunFlag[] = ["agent-timeout", "timeout"];
const WEAK_VERIFIER_FLAG: RunFlag = "weak-verifier";

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function finiteOrNull(value: number): number | null {
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

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
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

export function runDetail(result: RunResult): RunDetail {
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
        ? tellingLines(result.verifier.output).map((line) =>
            labelCanaryLines(line, result.verifier?.canaries ?? []),
          )
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

/**
 * What became of a flagged run's verifier, in words for the reports. A verifier that never ran
 * (its environment failed, or `bench check` found it broken) or that was killed has no exit code,
 * and the reports say which instead of showing an empty one.
 */
export function verifierExitText(run: RunDetail): string {
  const verifier = run.verifier;
  if (verifier === undefined) return "no verifier run";
  if (verifier.source === "setup") return "verifier not run: the environment could not be prepared";
  if (verifier.source === "check")
    return verifier.exitCode === null
      ? "verifier not run: bench check found it broken"
      : `verifier not run: bench check found it broken (exit ${verifier.exitCode} on the untouched repository)`;
  if (verifier.exitCode !== null) return `verifier exit ${verifier.exitCode}`;
  if (run.flags.includes("timeout")) return "verifier killed at its time limit";
  if (run.flags.includes("oom")) return "verifier killed at its memory limit";
  if (run.flags.includes("process-limit")) return "verifier killed at its process limit";
  return "verifier gave no exit status";
}

interface Tested {
  readonly delta: number;
  readonly p: number;
  readonly pMethod: {
    readonly method: SignFlipMethod;
    readonly error: number | null;
    readonly pLower?: number;
  };
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
    pMethod: {
      method: summary.signflip.method,
      error: summary.signflip.error ?? null,
      ...(summary.signflip.pLower === undefined ? {} : { pLower: summary.signflip.pLower }),
    },
    class: summary.class,
    ttest: verdict(summary.ttest.p),
    wilcoxon: verdict(summary.wilcoxon.p),
  };
}

/** What a profile is judged against beyond its runs: the protocol and the verifier check. */
export interface ProfileContext {
  /** Requirements per skill of the protocol (10 when absent). */
  readonly requirementsPerSkill?: number;
  /** Why the check found a verifier weak, keyed by `JSON.stringify([skill, requirement])`. */
  readonly weakReasons?: ReadonlyMap<string, string>;
}

/** The check's reason for every weak verifier recorded in a run's manifest. */
export function weakReasonsOf(manifest: {
  readonly check?:
    | {
        readonly requirements: ReadonlyArray<{
          readonly skill: string;
          readonly requirement: string;
          readonly status: string;
          readonly reason: string;
        }>;
      }
    | undefined;
}): Map<string, string> {
  return new Map(
    (manifest.check?.requirements ?? [])
      .filter((requirement) => requirement.status === "weak")
      .map((requirement) => [
        JSON.stringify([requirement.skill, requirement.requirement]),
        requirement.reason,
      ]),
  );
}

/** Requirements per skill the protocol writes (A.2): a class from far fewer is labelled. */
export const PROTOCOL_REQUIREMENTS = 10;

export const UNTREATED_REASON =
  "no class: no agent changed the repository in either arm (both arms untouched, e.g. --agent none), so the deltas measure the verifier's own variation, not the skill";

/**
 * Whether every run of both arms left the repository as it was (an empty captured change).
 * Runs from stores older than captured patches do not tell, and count as treated.
 */
function untouchedInBothArms(runs: readonly RunResult[]): boolean {
  const arms = new Set(runs.map((run) => run.arm));
  return (
    arms.has("with") &&
    arms.has("without") &&
    runs.every(
      (run) =>
        run.patch !== undefined &&
        run.patch.diff === "" &&
        run.patch.files === 0 &&
        run.patch.incomplete === undefined,
    )
  );
}

/**
 * The label of a class resting on fewer than half the protocol's requirements; with so few the
 * smallest attainable sign-flip p, 2^(1−n), may not even reach α.
 */
export function fewRequirementsNote(
  n: number,
  requirementsPerSkill: number,
  alpha: number,
): string | undefined {
  if (n * 2 >= requirementsPerSkill) return undefined;
  const reachable = 2 ** (1 - n) < alpha;
  return `class from ${n} of the protocol's ${requirementsPerSkill} requirements${reachable ? "" : ` (with ${n}, no p below α = ${alpha} is attainable: only Ineffective was possible)`}`;
}

function profileNotes(parts: {
  readonly activation: number | null;
  readonly unmeasured: readonly UnmeasuredRequirement[];
  readonly unscorable: string | null;
  readonly weakMeasured: ReadonlyArray<{
    readonly id: string;
    readonly reason?: string | undefined;
  }>;
  readonly partlyLost: readonly RequirementOutcome[];
  readonly disagreements: readonly string[];
  readonly few: string | undefined;
}): string[] {
  const notes: string[] = [];
  if (parts.few !== undefined) notes.push(parts.few);
  if (parts.activation === 0) {
    notes.push(
      "the agent never activated the skill in the assisted arm: the skill cannot have helped, and any difference is noise or the skill's mere presence",
    );
  }
  if (parts.unmeasured.length > 0 && parts.unscorable === null) {
    notes.push(
      `left out of the verdict (not measurable): ${parts.unmeasured.map((item) => `${item.requirement} (${item.reason})`).join(", ")}`,
    );
  }
  if (parts.weakMeasured.length > 0) {
    notes.push(
      `weak verifier: ${parts.weakMeasured.map((item) => `${item.id} (${item.reason ?? "found weak by bench check; its reason is not in this run's manifest"})`).join(", ")}: counted in the verdict, where it can only shrink a difference between the arms`,
    );
  }
  if (parts.partlyLost.length > 0) {
    notes.push(
      `repeats lost to infrastructure, left out of their arm's mean: ${parts.partlyLost.flatMap((outcome) => outcome.lost.map((run) => run.key)).join(", ")}`,
    );
  }
  if (parts.disagreements.length > 0)
    notes.push(`sensitivity disagrees with the primary class: ${parts.disagreements.join(", ")}`);
  return notes;
}

/**
 * The flags an arm brings to `pairMeasurement`, over its repeats: every flag of every repeat,
 * except that a verifier-side flag counts only when *every* repeat of the arm has one. With one
 * repeat this is the run's flags. With several, one repeat whose verifier worked proves the
 * verifier works in that arm, so a skill whose own arm broke the verifier cannot get the pair
 * dropped because one unassisted repeat happened to break it too.
 */
export function armMeasurementFlags(runs: readonly RunDetail[]): string[] {
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
  return armsMeasurement(without, assisted);
}

/**
 * Whether two arms' runs of one requirement make a measurable pair: the one rule for a profile's
 * pair and for every pair of the arm matrix (`arms.ts`). The flags decide by `pairMeasurement`;
 * and an agent that failed (exited non-zero or crashed) in every repeat of both arms measured
 * nothing about the skill — whatever the verifier then scored is the untouched work of two
 * failed agents, so the pair is left out (with `--no-check` nothing else would stop it). An
 * agent failing in one arm only may be the skill's doing: that arm's score stands.
 */
export function armsMeasurement(
  left: readonly RunDetail[],
  right: readonly RunDetail[],
): Exclude<RequirementMeasurement, { readonly cause: "infrastructure" | "not-run" }> {
  const verdict = pairMeasurement(armMeasurementFlags(left), armMeasurementFlags(right));
  if (!verdict.measurable)
    return { measurable: false, cause: "flags", reason: verdict.reason, flags: verdict.flags };
  const failed = (runs: readonly RunDetail[]) =>
    runs.length > 0 && runs.every((run) => run.status === "agent_error");
  if (failed(left) && failed(right)) {
    return {
      measurable: false,
      cause: "agent",
      reason: "the agent failed (exited non-zero) in every run of both arms",
      flags: [],
    };
  }
  return { measurable: true };
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
    spread: {
      without: scoreSd(detail.without.map((run) => run.score)),
      with: scoreSd(detail.with.map((run) => run.score)),
    },
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

export function armUsage(runs: readonly RunResult[]): ArmUsage {
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
export function countFlags(
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
export function lostRuns(
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

export function profileOf(
  config: string,
  skill: string,
  runs: readonly RunResult[],
  lost: ReadonlyMap<string, LostRun[]>,
  requirementIds: readonly string[],
  alpha: number,
  context: ProfileContext = {},
): Profile {
  const requirementsPerSkill = context.requirementsPerSkill ?? PROTOCOL_REQUIREMENTS;
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
  // Neither arm changed the repository: the pairs measure the verifier, not the skill.
  const untreated = complete.length > 0 && untouchedInBothArms(runs);
  const primary = untreated ? undefined : test(deltas, alpha);
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
  const unscorable =
    complete.length === 0 ? unscorableReason(unmeasured) : untreated ? UNTREATED_REASON : null;
  const notes = profileNotes({
    activation,
    unmeasured,
    unscorable,
    weakMeasured: weakVerifiers
      .filter((id) => complete.some((outcome) => outcome.id === id))
      .map((id) => ({ id, reason: context.weakReasons?.get(JSON.stringify([skill, id])) })),
    partlyLost: requirements.filter(
      (outcome) => outcome.measurement.measurable && outcome.lost.length > 0,
    ),
    disagreements,
    few:
      primary === undefined
        ? undefined
        : fewRequirementsNote(complete.length, requirementsPerSkill, alpha),
  });

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
    // Filled in by buildReport, which sees every profile.
    q: null,
    classFdr: null,
    // No treatment: no interval or size to state (they would describe the verifier's noise).
    detectable: deltas.length === 0 || untreated ? null : detectableEffect(deltas, alpha),
    variability: repeatVariability(
      complete.map((outcome) => ({
        without: outcome.detail.without.map((run) => run.score),
        with: outcome.detail.with.map((run) => run.score),
      })),
    ),
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
