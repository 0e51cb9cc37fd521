/** The Agent Skills package model: parse, validate, inspect, write, install, clean, audit. */
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
export { inspectSkillFolder, type SkillInspection, type SkillModality } from "./inspect.js";
export {
  AGENT_INSTALL_DIRECTORY,
  AGENT_SKILL_DIRECTORIES,
  cleanAgentSkillFolders,
  type InstallOptions,
  type InstallResult,
  installSkill,
  SKILL_AGENTS,
  type SkillAgent,
} from "./install.js";
export {
  decodeText,
  loadSkillFolder,
  MAX_SKILL_FILE_BYTES,
  type ParsedSkillMarkdown,
  parseSkillMarkdown,
  SKILL_FILE_NAME,
} from "./parse.js";
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
