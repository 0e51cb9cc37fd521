/**
 * `skillsmith/skill`: Agent Skills packages (`SKILL.md` folders): parse, validate against the
 * spec, audit for unsafe content, inspect, write, install where an agent finds project skills,
 * and clean skill folders out of a workspace.
 *
 * @packageDocumentation
 */
export { auditSkillFolder, auditText, hasHighSeverity } from "./audit.js";
export {
  type AuditBaseline,
  applyBaseline,
  auditFails,
  createBaseline,
  readBaseline,
  writeBaseline,
} from "./baseline.js";
export { findSkillFolders } from "./discover.js";
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
// Experimental (see the README): skills from git with a lock file.
export {
  type AddResult,
  addSkills,
  type CheckedSkill,
  checkSkills,
  type ListedSkill,
  listSkills,
  type ManageOptions,
  removeSkills,
  updateSkills,
} from "./manage.js";
export {
  loadSkillFolder,
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
export {
  BODY_MAX_LINES,
  COMPATIBILITY_MAX_LENGTH,
  DESCRIPTION_MAX_LENGTH,
  estimateTokens,
  NAME_MAX_LENGTH,
  validateSkillFolder,
} from "./validate.js";
export { renderSkillMarkdown, type SkillContent, writeSkillFolder } from "./write.js";
