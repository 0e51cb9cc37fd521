/**
 * `skillsmith/stats`: the statistics behind every verdict. Exact two-sided sign-flip test,
 * paired t and exact Wilcoxon for sensitivity, the protocol's classes, correlations, bootstrap
 * intervals, and for many skills at once: Benjamini–Hochberg q-values, what a test could detect
 * and how many requirements would detect an effect (definitions: `src/stats/README.md`).
 *
 * @packageDocumentation
 */
export {
  type BootstrapOptions,
  bootstrapMeanCi,
  type ConfidenceInterval,
} from "./bootstrap.js";
export { classify, INEFFECTIVE_DEFINITION, type SkillClass } from "./classify.js";
export { pearson, spearman } from "./correlation.js";
// Experimental (see the README): the figures of protocol A.6 across many skills.
export {
  type DetectableEffect,
  type DetectableOptions,
  describeShiftInterval,
  detectableEffect,
  minimumSignFlipP,
  type ShiftInterval,
  shiftConfidenceInterval,
  signFlipSize,
} from "./detectable.js";
export { benjaminiHochberg } from "./multiplicity.js";
// Experimental (see the README).
export {
  type PairedBinomialInput,
  type PowerEstimate,
  type PowerOptions,
  pairedBinomialPower,
  type RequirementsForPower,
  requirementsForPairedBinomialPower,
  requirementsForPower,
  signFlipPower,
} from "./power.js";
export { createSeededRandom, type SeededRandom } from "./random.js";
export {
  type SignFlipMethod,
  type SignFlipOptions,
  type SignFlipResult,
  signFlipTest,
} from "./signflip.js";
export { type DeltaSummary, type SummaryOptions, summarizeDeltas } from "./summary.js";
export { pairedTTest, type TTestResult } from "./ttest.js";
export { type WilcoxonOptions, type WilcoxonResult, wilcoxonSignedRank } from "./wilcoxon.js";
