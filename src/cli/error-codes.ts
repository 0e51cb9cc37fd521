/**
 * The error codes of `cli/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const CLI_ERROR_CODES = [
  "cli.count",
  "cli.integer",
  "cli.option-invalid",
  "cli.option-missing",
  "cli.port",
  "cli.review-both-decisions",
  "cli.seconds",
  "cli.share",
  "cli.skill-home",
  "cli.skill-nothing-to-serve",
  "cli.stats-bad-alpha",
  "cli.stats-bad-deltas",
  "cli.stats-bad-deltas-file",
  "cli.stats-conflicting-flags",
  "cli.stats-deltas-file-unreadable",
  "cli.stats-missing-deltas",
  "cli.synth-family-dir",
  "cli.synth-family-unknown",
  "cli.synth-pool-empty",
  "cli.synth-pool-test-tasks",
  "cli.synth-skillopt-missing",
  "cli.synth-split",
  "cli.synth-tasks-unknown",
  "cli.temperature",
  "cli.view-port",
  "cli.wiki-budget",
  "cli.wiki-embedding-model",
  "cli.wiki-fields",
  "cli.wiki-min-score",
  "cli.wiki-model",
  "cli.wiki-online",
  "cli.wiki-results-path",
  "cli.wiki-shortlist-size",
  "cli.wiki-visual-boost",
] as const satisfies readonly `cli.${string}`[];

export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<CliErrorCode, "cli"> {}
}
