/** The Agent Skills package model: parse, validate, inspect, write, install, clean, audit. */

export { AGENTS, type AgentSkillFolders, agentFolders } from "./agents.js";
export {
  auditSkillFolder,
  auditText,
  findingId,
  hasHighSeverity,
  MAX_AUDIT_FILE_BYTES,
  MAX_AUDIT_TOTAL_BYTES,
} from "./audit.js";
export {
  AUDIT_SEVERITIES,
  type AuditBaseline,
  applyBaseline,
  auditFails,
  BASELINE_FORMAT,
  BASELINE_VERSION,
  type BaselineResult,
  createBaseline,
  findingFails,
  readBaseline,
  writeBaseline,
} from "./baseline.js";
export { findSkillFolders } from "./discover.js";
export { MAX_SKILL_DEPTH, MAX_SKILL_ENTRIES, type SkillEntry } from "./files.js";
export { formatFinding, formatFindingList } from "./format.js";
export {
  checkoutCommit,
  findSkillsInCheckout,
  GIT_TIMEOUT_MS,
  parseSkillSource,
  resolveRemoteCommit,
  type SkillSource,
  skillContentHash,
} from "./git-source.js";
export { inspectSkillFolder, type SkillInspection, type SkillModality } from "./inspect.js";
export {
  AGENT_INSTALL_DIRECTORY,
  AGENT_SKILL_DIRECTORIES,
  agentSkillsFolder,
  cleanAgentSkillFolders,
  type InstallMode,
  type InstallOptions,
  type InstallResult,
  type InstallScope,
  installSkill,
  SKILL_AGENTS,
  type SkillAgent,
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
export {
  type AddResult,
  addSkills,
  type CheckedSkill,
  checkSkills,
  type ListedSkill,
  listSkills,
  lockFileOf,
  type ManageOptions,
  removeSkills,
  updateSkills,
} from "./manage.js";
// The MCP server and the Skills extension (`createSkillsMcpServer`, `loadSkillsToServe`,
// `serveMcpStdio`, `serveMcpHttp` in `./mcp-server.js`; `registerSkillsExtension`,
// `loadServedSkill`, `isServedSkill`, `digestOf`, `skillFileUri`, the limits in
// `./mcp-skills.js`) are imported from those modules, not re-exported here: the MCP SDK costs
// ~0.5 s of start-up, and this barrel is imported by the runner, the importers and most commands.
export type { HttpMcpServer, SkillsToServe } from "./mcp-server.js";
export type { ServedSkill, SkippedSkill } from "./mcp-skills.js";
export {
  decodeText,
  loadSkillFolder,
  MAX_SKILL_FILE_BYTES,
  type ParsedSkillMarkdown,
  parseSkillMarkdown,
  SKILL_FILE_NAME,
} from "./parse.js";
export { escapeXml, type PromptSkill, promptSkillsOf, renderAvailableSkills } from "./prompt.js";
export type {
  AuditFinding,
  AuditReport,
  AuditSeverity,
  Finding,
  SkillFrontmatter,
  SkillValidationResult,
} from "./types.js";
export { SKILL_FRONTMATTER_FIELDS } from "./types.js";
export {
  BODY_MAX_LINES,
  COMPATIBILITY_MAX_LENGTH,
  DESCRIPTION_MAX_LENGTH,
  estimateTokens,
  NAME_MAX_LENGTH,
  validateSkillFolder,
} from "./validate.js";
export { renderSkillMarkdown, type SkillContent, writeSkillFolder } from "./write.js";
