/**
 * The error codes of `report/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const REPORT_ERROR_CODES = [
  "report.browser-script",
  "report.eval-inputs-changed",
  "report.eval-needs-generator",
  "report.eval-repository-conflict",
  "report.eval-repository-missing",
  "report.eval-skill-not-in-suite",
  "report.eval-state-damaged",
  "report.page-element",
  "report.page-http",
  "report.report-library-missing",
  "report.skill-missing",
  "report.view-listen",
  "report.view-no-run-dir",
  "report.view-token",
  "report.view-token-required",
] as const satisfies readonly `report.${string}`[];

export type ReportErrorCode = (typeof REPORT_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<ReportErrorCode, "report"> {}
}
