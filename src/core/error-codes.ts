/**
 * The error codes of `core/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const CORE_ERROR_CODES = [
  "core.dependency-missing",
  "core.file-unreadable",
  "core.lock-timeout",
  "core.package-root-missing",
] as const satisfies readonly `core.${string}`[];

export type CoreErrorCode = (typeof CORE_ERROR_CODES)[number];

declare module "./errors.js" {
  interface ErrorCodeRegistry extends Record<CoreErrorCode, "core"> {}
}
