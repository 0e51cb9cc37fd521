/**
 * Protocol C's numbers in one place: every default the synthesis code uses is read from here,
 * and the same object is recorded in every run manifest and optimisation report, so a reader
 * can see (and a rerun can reproduce) exactly what was in force.
 */
import { formatTag } from "../core/format-tag.js";
import { maxSlotCharacters, maxSlotsPerCategory, maxSlotsPerPatch } from "./slots.js";

/**
 * The format tags of the synth artefacts skillsmith writes and nothing reads back (one
 * convention, `core/format-tag.ts`; before it they said `formatVersion: 1`): a run manifest,
 * and the settings recorded inside run manifests and optimisation reports.
 */
export const SYNTH_RUN_FORMAT = formatTag("synth-run", 1);
export const SYNTH_SETTINGS_FORMAT = formatTag("synth-settings", 1);

/** Temperatures of the four roles (protocol C §4: solver and synthesiser 0, critic and editor 0.2). */
export const roleTemperatures = {
  solver: 0,
  synthesiser: 0,
  critic: 0.2,
  editor: 0.2,
} as const;

/** Top-k of retrieval (protocol C §2). */
export const defaultTopK = 3;

/** MPO (protocol C §4): epochs, the share of the training split each epoch runs, the seed. */
export const defaultEpochs = 3;
export const defaultSampleShare = 0.25;
export const defaultOptimiseSeed = 1;

/** Transition kinds and the 3:2:1:1 ratio the critic's cases are drawn in (protocol C §4). */
export const transitionKinds = [
  "regression",
  "improvement",
  "persistent-success",
  "persistent-failure",
] as const;
export type TransitionKind = (typeof transitionKinds)[number];

export const caseRatio: Readonly<Record<TransitionKind, number>> = {
  regression: 3,
  improvement: 2,
  "persistent-success": 1,
  "persistent-failure": 1,
};

/**
 * Train share of every shipped family's split: half the tasks train, so the pool (built on
 * train) has as many tasks as the test split — protocol C §1's pool-to-test ratio of 1:1.
 */
export const defaultTrainShare = 0.5;

/**
 * How much of each case the critic is shown, in characters (≈ 4 per token). Each text is cut
 * deterministically (head and tail kept, the cut marked and recorded); the cases together stay
 * within `casesCharacters` (≈ 12k tokens): a case that would pass it is shown with its signals
 * only, and one that would pass it even so is left out — both recorded in the epoch report.
 */
export const criticInputLimits = {
  /** The target's visible fields. */
  targetCharacters: 3_000,
  /** A synthesised skill, per run. */
  skillCharacters: 2_500,
  /** The solver's answer, per run. */
  answerCharacters: 2_000,
  /** The solver's steps (multi-step solvers), per run. */
  stepsCharacters: 1_500,
  /** The retrieved evidence text of a run (all its hits together). */
  evidenceCharacters: 3_000,
  /** The slot diff since the previous run. */
  slotDiffCharacters: 6_000,
  /** All cases together. */
  casesCharacters: 48_000,
} as const;
export type CriticInputLimits = { readonly [key in keyof typeof criticInputLimits]: number };

/** The settings of one synthesis command, as recorded in its artefacts. */
export interface SynthSettings {
  readonly format: typeof SYNTH_SETTINGS_FORMAT;
  readonly topK: number;
  readonly slots: {
    readonly maxSlotsPerCategory: number;
    readonly maxSlotCharacters: number;
    readonly maxSlotsPerPatch: number;
  };
  readonly temperatures: typeof roleTemperatures;
  readonly optimisation: {
    readonly epochs: number;
    readonly sampleShare: number;
    readonly seed: number;
    readonly caseRatio: Readonly<Record<TransitionKind, number>>;
  };
  readonly split: {
    readonly seed: number;
    readonly trainShare: number;
    /** Train tasks : test tasks the share gives by default ("1:1" for ½). */
    readonly poolToTestRatio: string;
  };
  readonly criticInput: CriticInputLimits;
}

function ratioText(trainShare: number): string {
  const train = Math.round(trainShare * 100);
  const test = 100 - train;
  const divisor = (a: number, b: number): number => (b === 0 ? a : divisor(b, a % b));
  const common = divisor(train, test) || 1;
  return `${train / common}:${test / common}`;
}

/** The settings in force, defaults filled in for whatever the caller did not set. */
export function synthSettings(overrides: {
  readonly splitSeed: number;
  readonly topK?: number;
  readonly epochs?: number;
  readonly sampleShare?: number;
  readonly seed?: number;
  readonly trainShare?: number;
}): SynthSettings {
  const trainShare = overrides.trainShare ?? defaultTrainShare;
  return {
    format: SYNTH_SETTINGS_FORMAT,
    topK: overrides.topK ?? defaultTopK,
    slots: { maxSlotsPerCategory, maxSlotCharacters, maxSlotsPerPatch },
    temperatures: roleTemperatures,
    optimisation: {
      epochs: overrides.epochs ?? defaultEpochs,
      sampleShare: overrides.sampleShare ?? defaultSampleShare,
      seed: overrides.seed ?? defaultOptimiseSeed,
      caseRatio,
    },
    split: { seed: overrides.splitSeed, trainShare, poolToTestRatio: ratioText(trainShare) },
    criticInput: criticInputLimits,
  };
}
