/**
 * Verdicts and the aggregate views of protocol A.6–A.7, computed from the results store alone
 * (nothing is re-run). Every figure names the run keys it came from, so a reader can trace a
 * verdict back to trajectories.
 */
import {
  classify,
  pearson,
  type SkillClass,
  spearman,
  summarizeDeltas,
} from "../../stats/index.js";
import type { RunManifest } from "../store/manifest.js";
import { type Arm, formatRunKey, type RunResult } from "../store/results.js";

export interface RequirementOutcome {
  readonly id: string;
  /** Mean pass ratio over repeats; null when the arm has no stored result yet. */
  readonly without: number | null;
  readonly with: number | null;
  /** d_i = 100·(y¹ − y⁰); null when either arm is missing. */
  readonly delta: number | null;
  /** True when any run of the pair hit the agent's time limit. */
  readonly timeout: boolean;
  /** Both arms 100%, or the same set of passed checks in every repeat. */
  readonly identical: boolean;
  /** Required files (File Operations) missing after the assisted run but present after the unassisted one. */
  readonly misplaced: readonly string[];
  readonly runs: { readonly without: readonly string[]; readonly with: readonly string[] };
}

export interface TestVerdict {
  readonly p: number | null;
  readonly class: SkillClass | null;
}

export interface Profile {
  readonly skill: string;
  readonly config: string;
  readonly requirements: readonly RequirementOutcome[];
  /** Complete pairs (both arms stored) entering the statistics. */
  readonly n: number;
  readonly without: number | null;
  readonly with: number | null;
  readonly delta: number | null;
  /** Exact two-sided sign-flip p (the primary test). */
  readonly p: number | null;
  readonly class: SkillClass | null;
  readonly sensitivity: {
    readonly ttest: TestVerdict;
    readonly wilcoxon: TestVerdict;
    readonly withoutTimeouts: TestVerdict & { readonly n: number; readonly delta: number | null };
    /** Names of the sensitivity analyses whose class differs from the primary class. */
    readonly disagreements: readonly string[];
  };
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
  readonly pairs: number;
  readonly without: number | null;
  readonly with: number | null;
  readonly delta: number | null;
  readonly classes: Readonly<Record<SkillClass, number>>;
  readonly usage: Readonly<Record<Arm, ArmUsage>>;
}

export interface PairKey {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
}

export interface BenchReport {
  readonly suite?: { readonly name: string; readonly path: string };
  readonly profiles: readonly Profile[];
  readonly configs: readonly ConfigSummary[];
  readonly pooled: {
    readonly pairs: number;
    readonly without: number | null;
    readonly with: number | null;
    readonly delta: number | null;
  };
  readonly pairs: {
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
  readonly runs: { readonly scored: number; readonly infraAttempts: number };
}

export interface BuildReportOptions {
  readonly alpha?: number;
  /** |Δy| at or above which a pair counts as a large change (default 0.5). */
  readonly largeChange?: number;
  readonly manifest?: RunManifest;
  /** Attempts lost to infrastructure (from the store), for the run summary. */
  readonly infraAttempts?: number;
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

interface Tested {
  readonly delta: number;
  readonly p: number;
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
    class: summary.class,
    ttest: verdict(summary.ttest.p),
    wilcoxon: verdict(summary.wilcoxon.p),
  };
}

function requirementOutcome(id: string, runs: readonly RunResult[]): RequirementOutcome {
  const byArm = (arm: Arm) =>
    runs.filter((run) => run.arm === arm).sort((left, right) => left.repeat - right.repeat);
  const without = byArm("without");
  const assisted = byArm("with");
  const y0 = mean(without.map((run) => run.passRatio));
  const y1 = mean(assisted.map((run) => run.passRatio));
  const repeats = new Set([...without, ...assisted].map((run) => run.repeat));
  let identical = y0 === 1 && y1 === 1;
  if (!identical && without.length > 0 && assisted.length > 0) {
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
  return {
    id,
    without: y0,
    with: y1,
    delta: y0 === null || y1 === null ? null : 100 * (y1 - y0),
    timeout: runs.some((run) => run.status === "timeout"),
    identical,
    misplaced: [...misplaced].sort(),
    runs: { without: without.map(formatRunKey), with: assisted.map(formatRunKey) },
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

/**
 * The report of a run directory's results. Requirement order follows the first appearance in
 * `results` (the store returns them sorted by key, and requirement ids sort naturally there).
 */
export function buildReport(
  results: readonly RunResult[],
  options: BuildReportOptions = {},
): BenchReport {
  const alpha = options.alpha ?? 0.05;
  const threshold = options.largeChange ?? 0.5;
  const profiles: Profile[] = [];
  const byProfile = groupBy(results, (run) => JSON.stringify([run.config, run.skill]));
  for (const [key, runs] of byProfile) {
    const [config, skill] = JSON.parse(key) as [string, string];
    const byRequirement = groupBy(runs, (run) => run.requirement);
    const requirements = [...byRequirement.entries()]
      .map(([id, group]) => requirementOutcome(id, group))
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
    const notes: string[] = [];
    if (activation === 0) {
      notes.push(
        "the agent never activated the skill in the assisted arm: the skill cannot have helped, and any difference is noise or the skill's mere presence",
      );
    }
    const incomplete = requirements
      .filter((outcome) => outcome.delta === null)
      .map((outcome) => outcome.id);
    if (incomplete.length > 0)
      notes.push(`requirements without both arms yet (left out): ${incomplete.join(", ")}`);
    if (disagreements.length > 0)
      notes.push(`sensitivity disagrees with the primary class: ${disagreements.join(", ")}`);
    profiles.push({
      skill,
      config,
      requirements,
      n: complete.length,
      without: mean(complete.map((outcome) => outcome.without as number)),
      with: mean(complete.map((outcome) => outcome.with as number)),
      delta: primary?.delta ?? null,
      p: primary?.p ?? null,
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
      activation_rate: activation,
      notes,
    });
  }
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
      without: y0,
      with: y1,
      delta: y0 === null || y1 === null ? null : 100 * (y1 - y0),
      classes: {
        golden: own.filter((profile) => profile.class === "golden").length,
        harmful: own.filter((profile) => profile.class === "harmful").length,
        ineffective: own.filter((profile) => profile.class === "ineffective").length,
      },
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

  return {
    ...(options.manifest === undefined
      ? {}
      : { suite: { name: options.manifest.suite.name, path: options.manifest.suite.path } }),
    profiles,
    configs,
    pooled: {
      pairs: allPairs.length,
      without: pooledWithout,
      with: pooledWith,
      delta:
        pooledWithout === null || pooledWith === null ? null : 100 * (pooledWith - pooledWithout),
    },
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
    runs: { scored: results.length, infraAttempts: options.infraAttempts ?? 0 },
  };
}
