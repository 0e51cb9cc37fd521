/**
 * `skillsmith/report`: the self-contained HTML report of a run, the pair trajectory views, and
 * the live dashboard (`skillsmith view`), and the one-command evaluation (`evaluateSkill`).
 *
 * @packageDocumentation
 */

export {
  type CostEstimate,
  ESTIMATE_DEFAULTS,
  EVALUATION_FORMAT,
  type EvaluateSkillOptions,
  type EvaluateSkillResult,
  evaluateSkill,
  type SkillVerdict,
} from "./evaluate.js";
export { type HtmlReportOptions, renderHtmlReport } from "./html.js";
export {
  loadPairView,
  loadPairViews,
  type PairRef,
  type PairView,
  type PairViewOptions,
  pairViews,
} from "./pairs.js";
export { type Dashboard, type DashboardOptions, startDashboard } from "./server.js";
