/**
 * The error codes of `skill/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const SKILL_ERROR_CODES = [
  "skill.agent-missing",
  "skill.agent-unknown",
  "skill.baseline-invalid",
  "skill.baseline-not-json",
  "skill.baseline-unreadable",
  "skill.git-checkout-mismatch",
  "skill.git-failed",
  "skill.git-missing",
  "skill.git-ref-missing",
  "skill.git-timeout",
  "skill.home-unknown",
  "skill.lock-invalid",
  "skill.lock-newer",
  "skill.lock-not-json",
  "skill.lock-unreadable",
  "skill.not-a-directory",
  "skill.path-not-found",
  "skill.skill-audit-failed",
  "skill.skill-file-path-invalid",
  "skill.skill-folder-invalid",
  "skill.skill-install-conflict",
  "skill.skill-invalid",
  "skill.skill-lock-conflict",
  "skill.skill-modified-locally",
  "skill.skill-not-in-source",
  "skill.skill-not-locked",
  "skill.skills-folder-outside-workspace",
  "skill.source-empty",
  "skill.source-invalid",
  "skill.source-ref-invalid",
  "skill.workspace-missing",
  "skill.workspace-not-directory",
] as const satisfies readonly `skill.${string}`[];

export type SkillErrorCode = (typeof SKILL_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<SkillErrorCode, "skill"> {}
}
