/**
 * The error codes of `model/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const MODEL_ERROR_CODES = [
  "model.api-key-missing",
  "model.base-url-missing",
  "model.cache-miss",
  "model.cache-open",
  "model.config-invalid",
  "model.config-missing",
  "model.config-syntax",
  "model.embedding-unsupported-provider",
  "model.output-invalid",
  "model.request-failed",
  "model.retries-exhausted",
  "model.script-invalid",
  "model.script-syntax",
  "model.script-unreadable",
  "model.scripted-listen",
  "model.spec-invalid",
] as const satisfies readonly `model.${string}`[];

export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<ModelErrorCode, "model"> {}
}
