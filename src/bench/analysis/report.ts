import { definedFields } from "../../core/defined.js";
import { pearson, spearman } from "../../stats/index.js";
import type { ArmSkills } from "../store/manifest.js";
import {
  type AttemptRecord,
  formatRunKey,
  type RunProvenance,
  type RunResult,
} from "../store/results.js";
import {
  type ArmMatrix,
  adjustArmMatrices,
  familyPairs,
  isProfilePair,
  unadjustedArmMatrices,
} from "./arms.js";
import { controlConfigurations, controlOutcomes } from "./controls.js";
import {
  armUsage,
  countFlags,
  finiteOrNull,
  groupBy,
  lostRuns,
  mean,
  profileOf,
  weakReasonsOf,
} from "./profile.js";
import {
  type BenchReport,
  type BuildReportOptions,
  type ConfigSummary,
  type PairKey,
  type Profile,
  REPORT_FORMAT,
  type RequirementOutcome,
} from "./report-types.js";
import {
  DEFAULT_STATISTICS,
  designRecommendation,
  type Multiplicity,
  multiplicityOf,
  type StatisticsSettings,
} from "./statistics.js";

// The report's types and the helpers other modules use, from where they were first defined.
export {
  armMeasurementFlags,
  runDetail,
  runNeedsExplanation,
  verifierExitText,
} from "./profile.js";
export * from "./report-types.js";

/**
 * The report of a run directory's results (and its attempts: keys whose every attempt was lost
 * to infrastructure appear as unmeasured, their skill as unscorable when nothing else is left).
 */
export function buildReport(
  allResults: readonly RunResult[],
  options: BuildReportOptions = {},
): BenchReport {
  const statistics = statisticsOf(options);
  // Control configurations get control rows; only the others' arms are compared.
  const controlConfigs = controlConfigurations(options.manifest);
  const controls = controlOutcomes(
    allResults.filter((run) => controlConfigs.has(run.config)),
    controlConfigs,
    options.manifest?.untouchedScores,
  );
  const results = allResults.filter((run) => !controlConfigs.has(run.config));
  const attempts = (options.attempts ?? []).filter(
    (attempt) => !controlConfigs.has(attempt.config),
  );
  const lost = lostRuns(results, attempts);
  const { profiles, matrices, multiplicity } = adjustedProfiles(
    unadjustedProfiles(
      results,
      attempts,
      lost,
      statistics.alpha,
      weakReasonsOf(options.manifest ?? {}),
    ),
    results,
    statistics.alpha,
  );
  const configIds = [...new Set(profiles.map((profile) => profile.config))];
  const configs = configIds.map((config) =>
    configSummary(config, profiles, results, options, statistics),
  );
  const measurable = measurablePairs(profiles);
  const unmeasured = profiles.flatMap((profile) =>
    profile.measured.unmeasured.map(({ requirement, ...rest }) => ({
      config: profile.config,
      skill: profile.skill,
      requirement,
      ...rest,
    })),
  );
  const provenance = provenanceOf(results);
  return {
    format: REPORT_FORMAT,
    ...(options.manifest === undefined
      ? {}
      : { suite: { name: options.manifest.suite.name, path: options.manifest.suite.path } }),
    ...(matrices.length === 0 ? {} : { arms: matrices }),
    ...definedFields({ provenance, filter: options.filter }),
    statistics,
    profiles,
    multiplicity,
    configs,
    ...(options.manifest?.armSkills === undefined
      ? {}
      : { armSkills: armSkillsOf(options.manifest.armSkills, options.filter) }),
    ...(controls.length === 0 ? {} : { controls }),
    ...(options.completeness === undefined ? {} : { completeness: options.completeness }),
    pooled: pooledOf(measurable),
    measurement: {
      pairs: measurable.length + unmeasured.length,
      measurable: measurable.length,
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
    pairs: pairFigures(profiles, measurable, options.largeChange ?? 0.5),
    ...betweenConfigurations(configIds, profiles),
    runs: {
      scored: results.length,
      infraAttempts: attempts.filter((attempt) => attempt.outcome === "infra_error").length,
    },
  };
}

/** The manifest's arm skills of the skills the report's filter selects (all without one). */
function armSkillsOf(armSkills: readonly ArmSkills[], filter: BenchReport["filter"]): ArmSkills[] {
  const skills = filter?.skills;
  return armSkills.filter((entry) => skills === undefined || skills.includes(entry.skill));
}

/** α and the design recommendation's settings, every default written out. */
function statisticsOf(options: BuildReportOptions): StatisticsSettings {
  return {
    alpha: options.alpha ?? 0.05,
    detectEffect: options.detectEffect ?? DEFAULT_STATISTICS.detectEffect,
    targetPower: options.targetPower ?? DEFAULT_STATISTICS.targetPower,
    powerDraws: options.powerDraws ?? DEFAULT_STATISTICS.powerDraws,
    seed: options.seed ?? DEFAULT_STATISTICS.seed,
  };
}

/** Every (config, skill) known from results and from attempts alike, its profile before BH. */
function unadjustedProfiles(
  results: readonly RunResult[],
  attempts: readonly AttemptRecord[],
  lost: ReturnType<typeof lostRuns>,
  alpha: number,
  weakReasons: ReturnType<typeof weakReasonsOf>,
): Profile[] {
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
  const profiles = [...requirementIds.entries()].map(([key, ids]) => {
    const [config, skill] = JSON.parse(key) as [string, string];
    return profileOf(config, skill, byProfile.get(key) ?? [], lost, [...ids], alpha, {
      weakReasons,
    });
  });
  return profiles.sort((left, right) =>
    left.config === right.config
      ? left.skill.localeCompare(right.skill)
      : left.config.localeCompare(right.config),
  );
}

/**
 * One BH family per report: the profiles and the arm pairs that are not a profile's test. The
 * profiles and matrices come back with their q and class under FDR control.
 */
function adjustedProfiles(
  unadjusted: readonly Profile[],
  results: readonly RunResult[],
  alpha: number,
): { profiles: Profile[]; matrices: ArmMatrix[]; multiplicity: Multiplicity } {
  const unadjustedMatrices = unadjustedArmMatrices(results, alpha);
  const otherPairs = familyPairs(unadjustedMatrices);
  const multiplicity = multiplicityOf(
    unadjusted.map((profile) => ({ ...profile, size: profile.detectable?.size ?? null })),
    alpha,
    otherPairs.map((pair) => ({ delta: pair.delta, p: pair.p as number })),
  );
  const profiles: Profile[] = unadjusted.map((profile, index) => ({
    ...profile,
    q: multiplicity.q[index] ?? null,
    classFdr: multiplicity.classFdr[index] ?? null,
  }));
  const otherFdr = new Map<object, { q: number | null; classFdr: Profile["classFdr"] }>(
    otherPairs.map((pair, index) => [
      pair,
      multiplicity.otherQ[index] ?? { q: null, classFdr: null },
    ]),
  );
  const matrices = adjustArmMatrices(unadjustedMatrices, (matrix, pair) => {
    if (!isProfilePair(pair)) return otherFdr.get(pair);
    const profile = profiles.find(
      (candidate) => candidate.config === matrix.config && candidate.skill === matrix.skill,
    );
    return profile === undefined ? undefined : { q: profile.q, classFdr: profile.classFdr };
  });
  return { profiles, matrices, multiplicity: multiplicity.table };
}

/** Profiles of one configuration per class, counted (the raw classes and the FDR ones). */
function classCounts(own: readonly Profile[]): Pick<ConfigSummary, "classes" | "classesFdr"> {
  const count = (test: (profile: Profile) => boolean) => own.filter(test).length;
  return {
    classes: {
      golden: count((profile) => profile.class === "golden"),
      harmful: count((profile) => profile.class === "harmful"),
      ineffective: count((profile) => profile.class === "ineffective"),
      ...(own.some((profile) => profile.class === "undecided")
        ? { undecided: count((profile) => profile.class === "undecided") }
        : {}),
    },
    classesFdr: {
      golden: count((profile) => profile.classFdr === "golden"),
      harmful: count((profile) => profile.classFdr === "harmful"),
      ineffective: count((profile) => profile.classFdr === "ineffective"),
    },
  };
}

/** What the design recommendation needs of each profile: its measurable deltas and baselines. */
function designInput(profile: Profile) {
  return {
    deltas: profile.requirements.flatMap((outcome) =>
      outcome.delta === null ? [] : [outcome.delta],
    ),
    variability: profile.variability,
    baseline: profile.requirements.flatMap((outcome) =>
      outcome.delta === null || outcome.without === null ? [] : [outcome.without],
    ),
    trials: profile.requirements.flatMap((outcome) => {
      const runs = outcome.detail.without;
      if (outcome.delta === null || runs.length === 0) return [];
      const checks = runs.reduce((sum, run) => sum + run.total, 0) / runs.length;
      return checks > 0 ? [checks * runs.length] : [];
    }),
  };
}

function configSummary(
  config: string,
  profiles: readonly Profile[],
  results: readonly RunResult[],
  options: BuildReportOptions,
  statistics: StatisticsSettings,
): ConfigSummary {
  const own = profiles.filter((profile) => profile.config === config);
  const pairs = own.flatMap((profile) =>
    profile.requirements.filter((outcome) => outcome.delta !== null),
  );
  const y0 = mean(pairs.map((outcome) => outcome.without as number));
  const y1 = mean(pairs.map((outcome) => outcome.with as number));
  const configuration = options.manifest?.configurations.find(
    (candidate) => candidate.id === config,
  );
  const derivedFrom = configuration?.derivedFrom;
  const runs = results.filter((run) => run.config === config);
  const { classes, classesFdr } = classCounts(own);
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
    classes,
    unscorable: own.filter((profile) => profile.unscorable !== null).length,
    classesFdr,
    ...(derivedFrom === undefined
      ? {}
      : {
          derivedFrom: {
            id: derivedFrom.id,
            agent: derivedFrom.agent,
            ...(derivedFrom.model === undefined ? {} : { model: derivedFrom.model }),
          },
        }),
    design: designRecommendation(own.map(designInput), statistics),
    usage: {
      without: armUsage(runs.filter((run) => run.arm === "without")),
      with: armUsage(runs.filter((run) => run.arm === "with")),
    },
  };
}

interface MeasurablePair {
  readonly profile: Profile;
  readonly outcome: RequirementOutcome;
}

/** Every pair that entered a verdict, with its profile. */
function measurablePairs(profiles: readonly Profile[]): MeasurablePair[] {
  return profiles.flatMap((profile) =>
    profile.requirements
      .filter((outcome) => outcome.delta !== null)
      .map((outcome) => ({ profile, outcome })),
  );
}

function pooledOf(measurable: readonly MeasurablePair[]): BenchReport["pooled"] {
  const without = mean(measurable.map(({ outcome }) => outcome.without as number));
  const assisted = mean(measurable.map(({ outcome }) => outcome.with as number));
  return {
    pairs: measurable.length,
    without,
    with: assisted,
    delta: without === null || assisted === null ? null : 100 * (assisted - without),
  };
}

function pairKey(profile: Profile, outcome: RequirementOutcome): PairKey {
  return { config: profile.config, skill: profile.skill, requirement: outcome.id };
}

/** Identical outcomes, large changes, misplaced deliverables and timeouts among the pairs. */
function pairFigures(
  profiles: readonly Profile[],
  measurable: readonly MeasurablePair[],
  threshold: number,
): BenchReport["pairs"] {
  const identical = measurable.filter(({ outcome }) => outcome.identical);
  const large = measurable.filter(
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
  return {
    total: measurable.length,
    identical: {
      count: identical.length,
      share: measurable.length === 0 ? null : identical.length / measurable.length,
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
    timeouts: measurable.filter(({ outcome }) => outcome.timeout).length,
  };
}

/** Between each two configurations: correlation of the skills' Δ (≥ 3 shared) and sign changes. */
function betweenConfigurations(
  configIds: readonly string[],
  profiles: readonly Profile[],
): Pick<BenchReport, "correlations" | "signChanges"> {
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
  return { correlations, signChanges };
}

/** Results this run directory did not execute (reused, re-graded); undefined when none. */
function provenanceOf(results: readonly RunResult[]): BenchReport["provenance"] {
  const reused = results.flatMap((result) =>
    result.provenance?.kind === "reused" ? [takenFrom(result, result.provenance)] : [],
  );
  const regraded = results.flatMap((result) => {
    const provenance = result.provenance;
    if (provenance?.kind !== "regraded") return [];
    return [
      {
        ...takenFrom(result, provenance),
        rescored: provenance.rescored,
        ...(provenance.reason === undefined ? {} : { reason: provenance.reason }),
      },
    ];
  });
  return reused.length === 0 && regraded.length === 0 ? undefined : { reused, regraded };
}

/** A run this run directory did not execute: its key here, and the run directory and key it came from. */
function takenFrom(
  result: RunResult,
  provenance: RunProvenance,
): { key: string; runDir: string; from: string } {
  return { key: formatRunKey(result), runDir: provenance.runDir, from: provenance.key };
}
