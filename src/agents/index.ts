export { BuiltinHarness, type BuiltinOptions, builtinSystemPrompt } from "./builtin.js";
export { resolveInWorkspace, TOOL_LIMITS, WorkspacePathError } from "./builtin-tools.js";
export {
  CLAUDE_SKILLS_DIRECTORY,
  ClaudeCodeHarness,
  type ClaudeCodeOptions,
} from "./claude-code.js";
export {
  type ClaudeLogParse,
  type ClaudeResultLine,
  isEndpointFailure,
  parseClaudeStreamJson,
} from "./claude-log.js";
export {
  AGENT_CLIS,
  AgentCliMissingError,
  type AgentCliName,
  findAgentCli,
  requireAgentCli,
} from "./cli-locate.js";
export { CodexHarness, type CodexOptions, type CodexSandboxMode } from "./codex.js";
export {
  type CodexLogParse,
  parseCodexJsonl,
  skillsListedInCodexSession,
} from "./codex-log.js";
export { modelIdFromSpec } from "./common.js";
export {
  createHarness,
  HARNESS_NAMES,
  type HarnessName,
  type HarnessOptionsByName,
  isHarnessName,
} from "./registry.js";
export {
  applyDiff,
  NoneHarness,
  OracleHarness,
  type OracleOptions,
  type PatchKey,
  patchesFromDirectory,
  ReplayHarness,
  type ReplayOptions,
  type ScriptSolution,
  SOLUTION_MOUNT_PATH,
  type Solution,
  solutionsFromDirectory,
} from "./replay.js";
export { type InstalledSkill, installSkillFor } from "./skill-install.js";
export {
  addUsage,
  emptyUsage,
  findSkillActivation,
  finishTrajectory,
  isSkillActivated,
  parseTrajectory,
} from "./trajectory.js";
export type * from "./types.js";
