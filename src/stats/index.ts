/** The statistics core: exact tests and summaries behind every skill verdict. */
export {
  type BootstrapOptions,
  bootstrapMeanCi,
  type ConfidenceInterval,
  quantileOfSorted,
} from "./bootstrap.js";
export { classify, type SkillClass } from "./classify.js";
export { pearson, spearman } from "./correlation.js";
export {
  type DetectableEffect,
  type DetectableOptions,
  detectableEffect,
  minimumSignFlipP,
  type ShiftInterval,
  shiftConfidenceInterval,
  signFlipSize,
} from "./detectable.js";
export { benjaminiHochberg, countBelow } from "./multiplicity.js";
export {
  type PowerEstimate,
  type PowerOptions,
  type RequirementsForPower,
  requirementsForPower,
  signFlipPower,
} from "./power.js";
export { createSeededRandom, type SeededRandom } from "./random.js";
export { type MidRanks, midRanks } from "./ranks.js";
export {
  findGrid,
  type Grid,
  gridP,
  type SignFlipMethod,
  type SignFlipOptions,
  type SignFlipResult,
  signFlipTest,
} from "./signflip.js";
export {
  erfc,
  logGamma,
  normalCdf,
  normalTwoSided,
  regularizedIncompleteBeta,
  regularizedUpperGamma,
  studentTCdf,
  studentTTwoSided,
} from "./special.js";
export { type DeltaSummary, type SummaryOptions, summarizeDeltas } from "./summary.js";
export { pairedTTest, type TTestResult } from "./ttest.js";
export { type WilcoxonOptions, type WilcoxonResult, wilcoxonSignedRank } from "./wilcoxon.js";
