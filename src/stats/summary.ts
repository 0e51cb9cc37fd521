import { type BootstrapOptions, bootstrapMeanCi, type ConfidenceInterval } from "./bootstrap.js";
import { classify, type SkillClass } from "./classify.js";
import { requireFiniteNumbers, requireOpenUnitInterval } from "./input.js";
import { type SignFlipOptions, type SignFlipResult, signFlipTest } from "./signflip.js";
import { roundingTolerance } from "./tolerance.js";
import { pairedTTest, type TTestResult } from "./ttest.js";
import { type WilcoxonResult, wilcoxonSignedRank } from "./wilcoxon.js";

/** Everything `skillsmith stats test` reports about one vector of deltas. */
export interface DeltaSummary {
  readonly n: number;
  /** Mean delta Δ (in the unit of the input, points in the protocol). */
  readonly delta: number;
  readonly alpha: number;
  /** Signs by the one zero rule of `tolerance.ts` (the sign-flip and Wilcoxon tests use it too). */
  readonly positive: number;
  readonly negative: number;
  readonly zero: number;
  readonly signflip: SignFlipResult;
  readonly ttest: TTestResult;
  readonly wilcoxon: WilcoxonResult;
  /**
   * The verdict, from the sign-flip p (the protocol's primary test); "undecided" when p is a
   * "dp-bounds" bracket that still contains α after refinement (`signflip.decided` false).
   */
  readonly class: SkillClass;
  /** Verdicts the sensitivity tests would give at the same alpha. */
  readonly sensitivity: { readonly ttest: SkillClass; readonly wilcoxon: SkillClass };
  readonly ci: ConfidenceInterval;
}

export interface SummaryOptions {
  readonly signFlip?: SignFlipOptions;
  readonly bootstrap?: BootstrapOptions;
}

export function summarizeDeltas(
  deltas: readonly number[],
  alpha = 0.05,
  options: SummaryOptions = {},
): DeltaSummary {
  const values = requireFiniteNumbers(deltas, "deltas");
  const level = requireOpenUnitInterval(alpha, "alpha");
  const delta = values.reduce((sum, value) => sum + value, 0) / values.length;
  // The verdict's α lets a bounded p refine itself until it falls on one side of α.
  const signflip = signFlipTest(values, { decisionLevel: level, ...options.signFlip });
  const ttest = pairedTTest(values);
  const zeroBelow = roundingTolerance(values);
  const wilcoxon = wilcoxonSignedRank(values);
  return {
    n: values.length,
    delta,
    alpha: level,
    positive: values.filter((value) => value > zeroBelow).length,
    negative: values.filter((value) => value < -zeroBelow).length,
    zero: values.filter((value) => Math.abs(value) <= zeroBelow).length,
    signflip,
    ttest,
    wilcoxon,
    class: classify(
      {
        delta,
        p: signflip.p,
        ...(signflip.decided === undefined ? {} : { decided: signflip.decided }),
      },
      level,
    ),
    sensitivity: {
      ttest: classify({ delta, p: ttest.p }, level),
      wilcoxon: classify({ delta, p: wilcoxon.p }, level),
    },
    ci: bootstrapMeanCi(values, options.bootstrap),
  };
}
