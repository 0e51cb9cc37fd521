import { pearson, spearman } from "../../stats/index.js";
import { formatRunKey, type RunProvenance, type RunResult } from "../store/results.js";
import { adjustArmMatrices, familyPairs, isProfilePair, unadjustedArmMatrices } from "./arms.js";
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
  results: readonly RunResult[],
  options: BuildReportOptions = {},
): BenchReport {
  const alpha = options.alpha ?? 0.05;
  const statistics: StatisticsSettings = {
    alpha,
    detectEffect: options.detectEffect ?? DEFAULT_STATISTICS.detectEffect,
    targetPower: options.targetPower ?? DEFAULT_STATISTICS.targetPower,
    powerDraws: options.powerDraws ?? DEFAULT_STATISTICS.powerDraws,
    seed: options.seed ?? DEFAULT_STATISTICS.seed,
  };
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

  const weakReasons = weakReasonsOf(options.manifest ?? {});
  const byProfile = groupBy(results, (run) => JSON.stringify([run.config, run.skill]));
  const unadjusted: Profile[] = [...requirementIds.entries()].map(([key, ids]) => {
    const [config, skill] = JSON.parse(key) as [string, string];
    return profileOf(config, skill, byProfile.get(key) ?? [], lost, [...ids], alpha, {
      weakReasons,
    });
  });
  unadjusted.sort((left, right) =>
    left.config === right.config
      ? left.skill.localeCompare(right.skill)
      : left.config.localeCompare(right.config),
  );
  // One BH family per report: the profiles and the arm pairs that are not a profile's test.
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
        ...(own.some((profile) => profile.class === "undecided")
          ? { undecided: own.filter((profile) => profile.class === "undecided").length }
          : {}),
      },
      unscorable: own.filter((profile) => profile.unscorable !== null).length,
      classesFdr: {
        golden: own.filter((profile) => profile.classFdr === "golden").length,
        harmful: own.filter((profile) => profile.classFdr === "harmful").length,
        ineffective: own.filter((profile) => profile.classFdr === "ineffective").length,
      },
      ...(configuration?.derivedFrom === undefined
        ? {}
        : {
            derivedFrom: {
              id: configuration.derivedFrom.id,
              agent: configuration.derivedFrom.agent,
              ...(configuration.derivedFrom.model === undefined
                ? {}
                : { model: configuration.derivedFrom.model }),
            },
          }),
      design: designRecommendation(
        own.map((profile) => ({
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
        })),
        statistics,
      ),
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
  const reusedRuns = results.flatMap((result) =>
    result.provenance?.kind === "reused" ? [takenFrom(result, result.provenance)] : [],
  );
  const regradedRuns = results.flatMap((result) => {
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
  return {
    format: REPORT_FORMAT,
    ...(options.manifest === undefined
      ? {}
      : { suite: { name: options.manifest.suite.name, path: options.manifest.suite.path } }),
    ...(matrices.length === 0 ? {} : { arms: matrices }),
    ...(reusedRuns.length === 0 && regradedRuns.length === 0
      ? {}
      : { provenance: { reused: reusedRuns, regraded: regradedRuns } }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    statistics,
    profiles,
    multiplicity: multiplicity.table,
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

/** A run this run directory did not execute: its key here, and the run directory and key it came from. */
function takenFrom(
  result: RunResult,
  provenance: RunProvenance,
): { key: string; runDir: string; from: string } {
  return { key: formatRunKey(result), runDir: provenance.runDir, from: provenance.key };
}
