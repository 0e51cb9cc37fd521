/**
 * The error codes of `agents/`: an error of this module can only be built with one of them
 * (`ErrorCodeRegistry` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const AGENTS_ERROR_CODES = [
  "agents.agent-cli-missing",
  "agents.agent-endpoint-failure",
  "agents.agent-timeout",
  "agents.harness-builtin",
  "agents.harness-factory-invalid",
  "agents.harness-name-invalid",
  "agents.harness-name-taken",
  "agents.harness-options-missing",
  "agents.harness-skill-folder-invalid",
  "agents.harness-unknown",
  "agents.task-id-missing",
  "agents.tool-deadline-passed",
  "agents.tool-edit-ambiguous",
  "agents.tool-edit-not-found",
  "agents.tool-search-pattern-invalid",
  "agents.tool-skill-unknown",
  "agents.workspace-path-outside",
] as const satisfies readonly `agents.${string}`[];

export type AgentsErrorCode = (typeof AGENTS_ERROR_CODES)[number];

declare module "../core/errors.js" {
  interface ErrorCodeRegistry extends Record<AgentsErrorCode, "agents"> {}
}
