/**
 * `skillsmith/report`: the self-contained HTML report of a run, the pair trajectory views, and
 * the live dashboard (`skillsmith view`).
 *
 * @packageDocumentation
 */
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
