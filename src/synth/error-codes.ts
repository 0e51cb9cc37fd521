/**
 * The error codes of `synth/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const SYNTH_ERROR_CODES = [
  "synth.best-of-n-empty",
  "synth.best-of-n-samples",
  "synth.family-duplicate",
  "synth.family-invalid",
  "synth.family-no-tests",
  "synth.family-syntax",
  "synth.family-unreadable",
  "synth.humaneval-duplicate",
  "synth.humaneval-empty",
  "synth.humaneval-gzip",
  "synth.humaneval-harness",
  "synth.humaneval-hidden",
  "synth.humaneval-missing",
  "synth.humaneval-no-outcome",
  "synth.humaneval-record",
  "synth.humaneval-syntax",
  "synth.humaneval-unreadable",
  "synth.library-invalid",
  "synth.library-limits",
  "synth.library-missing",
  "synth.library-version",
  "synth.patch-invalid",
  "synth.pool-entry",
  "synth.pool-syntax",
  "synth.pool-unreadable",
  "synth.prompt-placeholder",
  "synth.react-unsupported",
  "synth.store-format",
  "synth.suite-agent-infra",
  "synth.suite-diff-too-large",
  "synth.suite-no-repository",
  "synth.suite-unknown-task",
] as const satisfies readonly `synth.${string}`[];

export type SynthErrorCode = (typeof SYNTH_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<SynthErrorCode, "synth"> {}
}
