/**
 * `skillsmith/agents`: agent harnesses behind one versioned interface (`AgentHarnessV1`): the real
 * Claude Code and Codex CLIs, a built-in agent over any AI SDK model, the replay / none / oracle
 * controls, and the registry to add your own (`registerHarness`).
 *
 * @packageDocumentation
 */
export { BuiltinHarness, type BuiltinOptions } from "./builtin.js";
export { ClaudeCodeHarness, type ClaudeCodeOptions } from "./claude-code.js";
export { AgentCliMissingError, findAgentCli } from "./cli-locate.js";
export { CodexHarness, type CodexOptions } from "./codex.js";
// Experimental (see the README): the registry.
export {
  BUILTIN_HARNESS_NAMES,
  type BuiltinHarnessName,
  createHarness,
  type HarnessFactory,
  type HarnessFacts,
  type HarnessOptionsByName,
  harnessFacts,
  harnessNames,
  isHarnessName,
  type KeyVariables,
  type RegisterOptions,
  registerHarness,
  unregisterHarness,
} from "./registry.js";
export {
  NoneHarness,
  OracleHarness,
  type OracleOptions,
  ReplayHarness,
  type ReplayOptions,
  type Solution,
} from "./replay.js";
export { findSkillActivation, finishTrajectory, isSkillActivated } from "./trajectory.js";
export type * from "./types.js";
