/**
 * The error codes of `stats/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const STATS_ERROR_CODES = [
  "stats.bad-bound",
  "stats.bad-seed",
  "stats.empty-input",
  "stats.length-mismatch",
  "stats.non-finite",
  "stats.not-a-number",
  "stats.not-an-array",
  "stats.not-on-grid",
  "stats.out-of-range",
  "stats.too-large-to-enumerate",
] as const satisfies readonly `stats.${string}`[];

export type StatsErrorCode = (typeof STATS_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<StatsErrorCode, "stats"> {}
}
