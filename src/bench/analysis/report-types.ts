/**
 * The shapes of the JSON report (`skillsmith-report/1`): what a reader of `bench report --json`
 * and the HTML report gets. Computed by `report.ts` and `profile.ts`.
 */

import { formatTag } from "../../core/format-tag.js";
import type { FlagEffect } from "../../env/verifier/flags.js";
import type { DetectableEffect, SignFlipMethod, SkillClass } from "../../stats/index.js";
import type { ArmSkills, RunManifest } from "../store/manifest.js";
import type { Arm, AttemptRecord, RunResult, VerifierRecord } from "../store/results.js";
import type { ArmMatrix } from "./arms.js";
import type {
  DesignRecommendation,
  Multiplicity,
  RepeatVariability,
  StatisticsSettings,
} from "./statistics.js";

/** The JSON report's format; bumped when a field changes meaning or goes away. */
export const REPORT_FORMAT = formatTag("report", 1);

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
  | ({ readonly measurable: false } & UnmeasuredCause);

/** Why a requirement's pair stays out of the verdict, and the flags that put it there. */
export interface UnmeasuredCause {
  /** `agent`: the agent failed (exited non-zero) in every repeat of both arms. */
  readonly cause: "flags" | "agent" | "infrastructure" | "not-run";
  readonly reason: string;
  readonly flags: readonly string[];
}

export interface RequirementOutcome {
  readonly id: string;
  /** Mean score over repeats; null when the arm has no stored result. */
  readonly without: number | null;
  readonly with: number | null;
  /** d_i = 100·(y¹ − y⁰); null when the pair is not measurable. */
  readonly delta: number | null;
  /** SD (points) of the arm's scores across repeats; null with fewer than two repeats. */
  readonly spread: { readonly without: number | null; readonly with: number | null };
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

export interface UnmeasuredRequirement extends UnmeasuredCause {
  readonly requirement: string;
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
  readonly pMethod?: {
    readonly method: SignFlipMethod;
    readonly error: number | null;
    /** "dp-bounds": the exact p lies in [pLower, p]; p is an upper bound, shown as "≤ p". */
    readonly pLower?: number;
  } | null;
  readonly class: SkillClass | null;
  /**
   * Benjamini–Hochberg q over every tested profile of this report (`multiplicity`); null for an
   * unscorable profile.
   */
  readonly q: number | null;
  /** The class under FDR control: golden / harmful when q < α, else ineffective. */
  readonly classFdr: SkillClass | null;
  /**
   * What this test could have detected (`detectableEffect`); null when unscorable.
   *
   * @experimental
   */
  readonly detectable: DetectableEffect | null;
  /** Within-requirement variability across repeats (measurable requirements). */
  readonly variability: RepeatVariability | null;
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
  /**
   * Set when runs of the skill's arms hold only patch-scan evidence no person has reviewed yet
   * (`src/bench/review/`): `class` and `classFdr` are then null, the statistics' classes kept here.
   */
  readonly review?: ProfileReview;
}

/** A verdict held for review: the suspicious runs and the class they hold back. */
export interface ProfileReview {
  readonly status: "needs-review";
  readonly heldClass: SkillClass | null;
  readonly heldClassFdr: SkillClass | null;
  /** Keys of the runs still to review. */
  readonly runs: readonly string[];
}

/** The runs with patch-scan findings (`suspicious`) and what people decided on them. */
export interface ReviewSummary {
  readonly pending: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly runs: ReadonlyArray<{
    readonly key: string;
    readonly status: "pending" | "accepted" | "rejected";
    readonly findings: readonly string[];
  }>;
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
  /**
   * Profiles per class; `undecided` (a p bracket still containing α, no class) only when some
   * profile is.
   */
  readonly classes: Readonly<Record<Exclude<SkillClass, "undecided">, number>> & {
    readonly undecided?: number;
    /** Profiles whose verdict waits for a review of suspicious runs (counted in no class). */
    readonly needsReview?: number;
  };
  /** Skills with nothing measurable (no class). */
  readonly unscorable: number;
  /** Golden / harmful / ineffective under FDR control (q < α). */
  readonly classesFdr: Readonly<Record<Exclude<SkillClass, "undecided">, number>>;
  /** When `--agent`/`--model` renamed this configuration: the suite's configuration it came from. */
  readonly derivedFrom?: { readonly id: string; readonly agent: string; readonly model?: string };
  /**
   * How many requirements (and repeats) would detect `statistics.detectEffect`; null without
   * spread.
   *
   * @experimental
   */
  readonly design: DesignRecommendation | null;
  readonly usage: Readonly<Record<Arm, ArmUsage>>;
}

/**
 * One control configuration's runs of one task requirement (`controls.ts`): what the control
 * reached against what it must reach. Never a class, never in the BH family.
 */
export interface ControlOutcome {
  readonly config: string;
  readonly agent: string;
  readonly skill: string;
  readonly requirement: string;
  /**
   * What the control must reach: 1 (the oracle); for `none` what the verifier check measured on
   * the untouched repository, or 0 where the check measured nothing (a reward-scored task).
   */
  readonly expectedScore: number;
  /** `untouched-check`: the verifier check's measurement; `control`: the harness's registration. */
  readonly expectedFrom: "control" | "untouched-check";
  readonly means: string;
  /** Mean score over its runs; null when a run could not be measured. */
  readonly score: number | null;
  readonly status: "as-expected" | "not-as-expected" | "unmeasured";
  /** In words, e.g. "the oracle reaches 1 as it must (…)". */
  readonly says: string;
  readonly runs: readonly RunDetail[];
}

/** A report made of part of a run: how many of the planned runs are stored. */
export interface Completeness {
  readonly complete: boolean;
  /** Run keys with a result. */
  readonly stored: number;
  /** Run keys the run plans (configurations × skills × requirements × arms × repeats). */
  readonly planned: number;
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
  /** α, the effect and power of the design recommendation, draws and seed. */
  readonly statistics: StatisticsSettings;
  readonly profiles: readonly Profile[];
  /**
   * Many skills tested at once: BH q-values, discoveries and false discoveries to expect.
   *
   * @experimental
   */
  readonly multiplicity: Multiplicity;
  /** Every pair of arms of each skill with variants (`./arms.ts`); absent without variants. */
  readonly arms?: readonly ArmMatrix[];
  /**
   * Results not executed in this run directory: unassisted runs reused from an earlier run
   * (`--reuse`), and runs re-graded from a stored patch (`bench regrade`); absent when none.
   */
  readonly provenance?: {
    readonly reused: ReadonlyArray<{
      readonly key: string;
      readonly runDir: string;
      readonly from: string;
    }>;
    readonly regraded: ReadonlyArray<{
      readonly key: string;
      readonly runDir: string;
      readonly from: string;
      readonly rescored: boolean;
      readonly reason?: string;
    }>;
  };
  readonly configs: readonly ConfigSummary[];
  /**
   * What each arm of each skill installed, under every configuration alike: the skills under test
   * (`treatment`) and the distractors every arm gets, by name and content digest. Absent when
   * the run directory's manifest does not record them.
   */
  readonly armSkills?: readonly ArmSkills[];
  /**
   * Control configurations (harnesses registered as controls: none, oracle): per task what the
   * control reached; they give no skill a verdict. Absent when the run has none.
   */
  readonly controls?: readonly ControlOutcome[];
  /**
   * How much of the planned run the report covers; when not complete, every verdict is
   * provisional. Absent when the run directory records no plan.
   */
  readonly completeness?: Completeness;
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
  /** Runs the patch scan flagged, when there are any (`skillsmith bench review`). */
  readonly review?: ReviewSummary;
}

export interface BuildReportOptions {
  readonly alpha?: number;
  /** Effect (points) the design recommendation is for. Default 10. */
  readonly detectEffect?: number;
  /** Power the design recommendation aims at. Default 0.8. */
  readonly targetPower?: number;
  /** Simulated delta vectors per power estimate. Default 1000. */
  readonly powerDraws?: number;
  /** Seed of the power simulation. Default 1. */
  readonly seed?: number;
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
  /** How many of the planned runs are stored (`reportRunDir` counts them from the manifest). */
  readonly completeness?: Completeness;
}
