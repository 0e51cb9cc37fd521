/**
 * Layer 6 of `src/env/verifier/README.md`: a Harbor reward reconciled with skillsmith's channel.
 * A task's `test.sh` decides its reward from what pytest did (usually: exit status 0 → 1), but the
 * code under test runs inside that pytest and can end it early (`os._exit(0)` when imported under
 * pytest) or otherwise make `test.sh` write a reward its tests never earned. When `test.sh` runs
 * pytest, skillsmith's plugin rides along (the inventory showed it loads) and reports what each
 * test did; a reward above what those outcomes allow is `tampered`.
 *
 * What an honest `test.sh` can write: at most the share of tests that passed, counting neither
 * tests pytest skipped before their body ran (a `skipif` mark, a fixture's skip: the verifier's
 * own decision) nor, when nothing was left to run, anything at all (a finished session of skipped
 * tests exits 0). A skip or xfail raised while a test's body runs counts as not passed: the
 * deliverable can raise it. Pure, so each rule is unit-tested.
 */
import type { ChannelOutcome, IntegrityAssessment } from "../../env/index.js";

/** Rounding slack for rewards written as decimals (`0.3333`). */
const TOLERANCE = 1e-3;

export interface RewardCeiling {
  readonly passed: number;
  /** Tests whose outcome counts (skipped in setup left out). */
  readonly counted: number;
  readonly finished: boolean;
  /** The highest reward these outcomes allow. */
  readonly ceiling: number;
}

export function rewardCeiling(
  outcome: ChannelOutcome,
  assessment: Pick<IntegrityAssessment, "passed" | "total">,
): RewardCeiling {
  const finished = outcome.records.some((record) => record.type === "finish");
  const skippedBeforeBody = outcome.records.filter(
    (record) => record.type === "result" && record.phases.setup === "skipped",
  ).length;
  const counted = Math.max(0, assessment.total - skippedBeforeBody);
  const passed = Math.min(assessment.passed, counted);
  const ceiling = counted === 0 ? (finished ? 1 : 0) : passed / counted;
  return { passed, counted, finished, ceiling };
}

/**
 * Evidence (`reward: …`) when the reward exceeds what the channel's outcomes allow, else
 * undefined.
 */
export function rewardDisagreement(
  reward: { readonly value: number; readonly file: string },
  ceiling: RewardCeiling,
): string | undefined {
  if (reward.value <= ceiling.ceiling + TOLERANCE) return undefined;
  const session = ceiling.finished ? "" : "; pytest's session never finished";
  return `reward: test.sh wrote ${reward.value} to ${reward.file}, but skillsmith's channel saw ${ceiling.passed} of ${ceiling.counted} test(s) pass (at most ${round(ceiling.ceiling)})${session}`;
}

/** How a reward's agreement is shown on an unflagged run. */
export function rewardAgreement(ceiling: RewardCeiling): string {
  return `reward cross-checked with skillsmith's channel: ${ceiling.passed} of ${ceiling.counted} test(s) passed`;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
