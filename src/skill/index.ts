/**
 * The Agent Skills package model as the rest of skillsmith uses it: the public surface
 * (`public.ts`, what `skillsmith/skill` exports) plus the internals the bench, CLI and tests
 * need. Only the internals are listed here, so the two lists cannot drift apart.
 */

export { AGENTS, type AgentSkillFolders, agentFolders } from "./agents.js";
export { findingId, MAX_AUDIT_FILE_BYTES, MAX_AUDIT_TOTAL_BYTES } from "./audit.js";
export {
  AUDIT_SEVERITIES,
  BASELINE_FORMAT,
  BASELINE_VERSION,
  type BaselineResult,
  findingFails,
} from "./baseline.js";
export { MAX_SKILL_DEPTH, MAX_SKILL_ENTRIES, type SkillEntry } from "./files.js";
export {
  checkoutCommit,
  findSkillsInCheckout,
  GIT_TIMEOUT_MS,
  parseSkillSource,
  resolveRemoteCommit,
  type SkillSource,
  skillContentHash,
} from "./git-source.js";
export {
  agentSkillsFolder,
  type InstallMode,
  type InstallScope,
} from "./install.js";
export {
  emptyLock,
  globalLockFile,
  LOCK_FORMAT,
  LOCK_VERSION,
  type LockEntry,
  PROJECT_LOCK_FILE,
  readLock,
  type SkillsLock,
} from "./lock.js";
export { lockFileOf } from "./manage.js";
// The MCP server and the Skills extension (`createSkillsMcpServer`, `loadSkillsToServe`,
// `serveMcpStdio`, `serveMcpHttp` in `./mcp-server.js`; `registerSkillsExtension`,
// `loadServedSkill`, `isServedSkill`, `digestOf`, `skillFileUri`, the limits in
// `./mcp-skills.js`) are imported from those modules, not re-exported here: the MCP SDK costs
// ~0.5 s of start-up, and this barrel is imported by the runner, the importers and most commands.
export type { HttpMcpServer, SkillsToServe } from "./mcp-server.js";
export type { ServedSkill, SkippedSkill } from "./mcp-skills.js";
export { decodeText, MAX_SKILL_FILE_BYTES } from "./parse.js";
export { escapeXml, type PromptSkill, promptSkillsOf, renderAvailableSkills } from "./prompt.js";
export * from "./public.js";
export { SKILL_FRONTMATTER_FIELDS } from "./types.js";
