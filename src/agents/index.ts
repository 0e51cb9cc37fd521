/**
 * The agents layer as the rest of skillsmith uses it: the public surface (`public.ts`, what
 * `skillsmith/agents` exports) plus the internals the bench, CLI and tests need. Only the
 * internals are listed here, so the two lists cannot drift apart.
 */

export { builtinSystemPrompt } from "./builtin.js";
export { resolveInWorkspace, TOOL_LIMITS, WorkspacePathError } from "./builtin-tools.js";
export { CLAUDE_SKILLS_DIRECTORY } from "./claude-code.js";
export {
  type ClaudeLogParse,
  type ClaudeResultLine,
  isEndpointFailure,
  parseClaudeStreamJson,
} from "./claude-log.js";
export { AGENT_CLIS, type AgentCliName, requireAgentCli } from "./cli-locate.js";
export type { CodexSandboxMode } from "./codex.js";
export {
  type CodexLogParse,
  parseCodexJsonl,
  skillsListedInCodexSession,
} from "./codex-log.js";
export { modelIdFromSpec, pricedUsage } from "./common.js";
export * from "./public.js";
export { HARNESS_NAMES, type HarnessName } from "./registry.js";
export {
  applyDiff,
  type PatchKey,
  patchesFromDirectory,
  type ScriptSolution,
  SOLUTION_MOUNT_PATH,
  solutionsFromDirectory,
} from "./replay.js";
export {
  type InstalledSkill,
  type InstalledSkills,
  installSkillFor,
  installSkillsFor,
  type SkillFolder,
} from "./skill-install.js";
export {
  addUsage,
  currentTrajectory,
  emptyUsage,
  isSkillActivated,
  parseTrajectory,
  TRAJECTORY_FORMAT,
} from "./trajectory.js";
