/**
 * The public shapes of the skill package model. Field names are part of the `--json` output of
 * `skillsmith skill validate|audit|inspect`, so they are stable.
 */

/** One problem found in a skill folder. `code` is stable; see `README.md` in this folder. */
export interface Finding {
  readonly code: string;
  readonly message: string;
  /** The file the finding is about, as `join(skillPath, relativePath)`. */
  readonly file: string;
  /** 1-based line in `file`, when the finding has one. */
  readonly line?: number;
  /** The frontmatter field, e.g. `name` or `metadata.version`. */
  readonly field?: string;
}

export interface SkillValidationResult {
  readonly path: string;
  readonly valid: boolean;
  readonly errors: Finding[];
  readonly warnings: Finding[];
}

export type AuditSeverity = "high" | "medium" | "low";

export interface AuditFinding {
  /**
   * Stable id of this finding (16 hex digits: rule, file and the flagged line's text, hashed),
   * for baselines and suppressions. Set by `auditSkillFolder`.
   */
  readonly id?: string;
  readonly code: string;
  readonly severity: AuditSeverity;
  readonly message: string;
  readonly file: string;
  readonly line?: number;
  /** True when a baseline accepts this finding: shown, but it does not fail the audit. */
  readonly suppressed?: boolean;
}

export interface AuditReport {
  readonly path: string;
  readonly findings: AuditFinding[];
}

/** The frontmatter fields the Agent Skills specification defines; nothing else is allowed. */
export const SKILL_FRONTMATTER_FIELDS = [
  "name",
  "description",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
] as const;

export type SkillFrontmatterField = (typeof SKILL_FRONTMATTER_FIELDS)[number];

/** Frontmatter of a valid skill, typed. */
export interface SkillFrontmatter {
  readonly name: string;
  readonly description: string;
  readonly license?: string;
  readonly compatibility?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Space-separated tool names, as the specification's canonical form writes them. */
  readonly "allowed-tools"?: string;
}

/** What a finding costs: errors make a skill invalid, warnings do not. */
export type FindingLevel = "error" | "warning";

/** A finding with its level, as collected internally before being split into lists. */
export interface LeveledFinding extends Finding {
  readonly level: FindingLevel;
}
