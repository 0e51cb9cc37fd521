/**
 * The error codes of `env/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const ENV_ERROR_CODES = [
  "env.base-changed",
  "env.base-image-invalid",
  "env.base-meta-invalid",
  "env.base-vanished",
  "env.browser-launch",
  "env.clone-failed",
  "env.clone-unreachable",
  "env.container-base-image-failed",
  "env.container-base-image-missing",
  "env.container-build-failed",
  "env.container-context-failed",
  "env.container-engine-failed",
  "env.container-engine-unreachable",
  "env.container-image-missing",
  "env.container-user-unknown",
  "env.invalid-bundle",
  "env.model-base-url-invalid",
  "env.overlay-mount-failed",
  "env.overlay-unmount-failed",
  "env.reference-patch-does-not-apply",
  "env.reference-path-outside-workspace",
  "env.repository-not-found",
  "env.sandbox-builtin",
  "env.sandbox-bwrap-missing",
  "env.sandbox-bwrap-unusable",
  "env.sandbox-env-name",
  "env.sandbox-factory-invalid",
  "env.sandbox-kind-invalid",
  "env.sandbox-kind-taken",
  "env.sandbox-mount-path",
  "env.sandbox-unknown",
  "env.sandbox-workspace-missing",
  "env.setup-failed",
  "env.setup-needs-sandbox",
  "env.system-file-unreadable",
  "env.task-base-image-missing",
  "env.task-build-failed",
  "env.task-build-timeout",
  "env.task-context-failed",
  "env.task-workdir-copy-failed",
  "env.unknown-commit",
  "env.unknown-materialise-method",
  "env.verifier-path-outside-workspace",
  "env.workspace-copy-failed",
] as const satisfies readonly `env.${string}`[];

export type EnvErrorCode = (typeof ENV_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<EnvErrorCode, "env"> {}
}
