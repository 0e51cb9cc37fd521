/**
 * A skill folder checked against the Agent Skills specification: frontmatter fields, name,
 * description, body size and links, each finding with its file, line and level.
 *
 * About 400 lines: one rule set, each rule a few lines over the same `Add` finding helper and the
 * specification's limits; parsing lives in `parse.ts` and link checking in `links.ts`.
 */
import { join } from "node:path";
import { checkLinks } from "./links.js";
import { type LoadedSkill, loadSkillFolder, type ParsedSkillMarkdown } from "./parse.js";
import {
  type Finding,
  type LeveledFinding,
  SKILL_FRONTMATTER_FIELDS,
  type SkillFrontmatter,
  type SkillValidationResult,
} from "./types.js";

// Link checking lives in `links.ts`; these stay importable from here as before.
export { type BodyLink, extractLinks, localLinkPath, MAX_CHECKED_LINK_TARGETS } from "./links.js";

/** Limits of the Agent Skills specification, counted in Unicode code points. */
export const NAME_MAX_LENGTH = 64;
export const DESCRIPTION_MAX_LENGTH = 1024;
export const COMPATIBILITY_MAX_LENGTH = 500;
/** The specification recommends a body under 500 lines and about 5000 tokens. */
export const BODY_MAX_LINES = 500;
export const BODY_MAX_TOKENS = 5000;

/** Tokens are estimated at 4 characters each, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Lines of a body; a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === "") return 0;
  return text.replace(/\n$/, "").split("\n").length;
}

function codePoints(text: string): number {
  return [...text].length;
}

/** Everything `validateSkillFolder` needs, computed once and shared with `inspect`. */
export interface CheckedSkill {
  readonly loaded: LoadedSkill;
  readonly findings: LeveledFinding[];
  /** The typed frontmatter, present when every field passed its rules. */
  readonly frontmatter: SkillFrontmatter | undefined;
}

/**
 * Validate a skill folder against every rule of the Agent Skills specification. Never throws
 * for anything about the folder: a missing path, a file instead of a folder, a binary or
 * oversized `SKILL.md` are all errors in the result.
 */
export async function validateSkillFolder(path: string): Promise<SkillValidationResult> {
  return toValidationResult(await checkSkillFolder(path));
}

export function toValidationResult(checked: CheckedSkill): SkillValidationResult {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  for (const { level, ...finding } of checked.findings) {
    (level === "error" ? errors : warnings).push(finding);
  }
  const byLocation = (left: Finding, right: Finding): number =>
    left.file === right.file
      ? (left.line ?? 0) - (right.line ?? 0)
      : left.file < right.file
        ? -1
        : 1;
  errors.sort(byLocation);
  warnings.sort(byLocation);
  return { path: checked.loaded.path, valid: errors.length === 0, errors, warnings };
}

export async function checkSkillFolder(path: string): Promise<CheckedSkill> {
  const loaded = await loadSkillFolder(path);
  const findings: LeveledFinding[] = [...loaded.findings];
  let frontmatter: SkillFrontmatter | undefined;
  if (loaded.markdown !== undefined) {
    findings.push(...loaded.markdown.findings);
    const file = join(path, "SKILL.md");
    if (loaded.markdown.frontmatter !== undefined) {
      const fieldFindings = checkFrontmatter(
        loaded.markdown.frontmatter,
        loaded.markdown.fieldLines,
        loaded.folderName,
        file,
        loaded.markdown.fieldSources,
      );
      findings.push(...fieldFindings);
      if (!fieldFindings.some((finding) => finding.level === "error")) {
        frontmatter = typedFrontmatter(loaded.markdown.frontmatter);
      }
    }
    findings.push(...checkBody(loaded.markdown, file));
    if (loaded.realPath !== undefined) {
      findings.push(...(await checkLinks(loaded.markdown, loaded.realPath, file)));
    }
  }
  return { loaded, findings, frontmatter };
}

function typedFrontmatter(raw: Readonly<Record<string, unknown>>): SkillFrontmatter {
  const tools = raw["allowed-tools"];
  return {
    name: String(raw.name).normalize("NFKC"),
    description: String(raw.description),
    ...(typeof raw.license === "string" ? { license: raw.license } : {}),
    ...(typeof raw.compatibility === "string" ? { compatibility: raw.compatibility } : {}),
    ...(raw.metadata !== undefined && raw.metadata !== null
      ? { metadata: raw.metadata as Record<string, string> }
      : {}),
    ...(typeof tools === "string"
      ? { "allowed-tools": tools }
      : Array.isArray(tools)
        ? { "allowed-tools": tools.join(" ") }
        : {}),
  };
}

/**
 * The frontmatter rules. `folderName` is the folder the skill lives in; the name must equal it
 * after NFKC normalisation of both, so that visually identical spellings (full-width letters,
 * ligatures) are treated as the same name.
 */
export function checkFrontmatter(
  frontmatter: Readonly<Record<string, unknown>>,
  fieldLines: ReadonlyMap<string, number>,
  folderName: string,
  file: string,
  fieldSources: ReadonlyMap<string, string> = new Map(),
): LeveledFinding[] {
  const findings: LeveledFinding[] = [];
  const add = (level: "error" | "warning", code: string, field: string, message: string): void => {
    const line = fieldLines.get(field) ?? fieldLines.get(field.split(".")[0] ?? field);
    findings.push({ level, code, message, file, field, ...(line === undefined ? {} : { line }) });
  };
  const known: ReadonlySet<string> = new Set(SKILL_FRONTMATTER_FIELDS);

  for (const key of Object.keys(frontmatter)) {
    if (!known.has(key)) {
      add(
        "error",
        "unknown-field",
        key,
        `unknown frontmatter field "${key}"; the specification allows only ${SKILL_FRONTMATTER_FIELDS.join(", ")} (put extra data under metadata)`,
      );
    }
  }

  checkName(frontmatter.name, folderName, add);
  checkDescription(frontmatter.description, add);

  const license = frontmatter.license;
  if (license !== undefined && typeof license !== "string") {
    add("error", "license-not-string", "license", "license must be a string");
  }

  const compatibility = frontmatter.compatibility;
  if (compatibility !== undefined) {
    if (typeof compatibility !== "string") {
      add("error", "compatibility-not-string", "compatibility", "compatibility must be a string");
    } else if (compatibility.trim() === "") {
      add(
        "error",
        "compatibility-empty",
        "compatibility",
        "compatibility must be 1–500 characters when present; remove the empty field",
      );
    } else if (codePoints(compatibility) > COMPATIBILITY_MAX_LENGTH) {
      add(
        "error",
        "compatibility-too-long",
        "compatibility",
        `compatibility is ${codePoints(compatibility)} characters; the limit is ${COMPATIBILITY_MAX_LENGTH}`,
      );
    }
  }

  const metadata = frontmatter.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== "object" || Array.isArray(metadata) || metadata instanceof Date) {
      add(
        "error",
        "metadata-not-mapping",
        "metadata",
        "metadata must be a mapping of string keys to string values",
      );
    } else {
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== "string") {
          add(
            "error",
            "metadata-value-not-string",
            `metadata.${key}`,
            metadataHint(key, value, fieldSources.get(`metadata.${key}`)),
          );
        }
      }
    }
  } else if (metadata === null) {
    add("error", "metadata-not-mapping", "metadata", "metadata is empty; remove it or add entries");
  }

  const tools = frontmatter["allowed-tools"];
  if (tools !== undefined) {
    if (Array.isArray(tools)) {
      if (tools.every((tool) => typeof tool === "string" && !/\s/.test(tool))) {
        add(
          "warning",
          "allowed-tools-list",
          "allowed-tools",
          "allowed-tools is a YAML list; the space-separated string form is read by more agents",
        );
      } else {
        add(
          "error",
          "allowed-tools-invalid",
          "allowed-tools",
          "allowed-tools must be a space-separated string of tool names (or a list of single names)",
        );
      }
    } else if (typeof tools !== "string") {
      add(
        "error",
        "allowed-tools-invalid",
        "allowed-tools",
        "allowed-tools must be a space-separated string of tool names",
      );
    }
  }
  return findings;
}

type Add = (level: "error" | "warning", code: string, field: string, message: string) => void;

function checkName(name: unknown, folderName: string, add: Add): void {
  if (name === undefined) {
    add("error", "name-missing", "name", "the required field name is missing");
    return;
  }
  if (name === null) {
    add("error", "name-empty", "name", "name must be 1–64 characters; it has no value");
    return;
  }
  if (typeof name !== "string") {
    add("error", "name-not-string", "name", `name must be a string, not ${describeType(name)}`);
    return;
  }
  const normalized = name.normalize("NFKC");
  if (normalized === "") {
    add("error", "name-empty", "name", "name must be 1–64 characters; it is empty");
    return;
  }
  if (normalized !== name) {
    add(
      "warning",
      "name-not-normalized",
      "name",
      `name changes under Unicode NFKC normalisation (to "${normalized}"); write it that way`,
    );
  }
  if (/[/\\\0]|\.\./.test(normalized)) {
    // Checked before the character rule: such a name would escape the skills folder on install.
    add(
      "error",
      "name-unsafe-path",
      "name",
      `name "${name}" contains a path separator or ".."; it must be a single folder name`,
    );
    return;
  }
  if (codePoints(normalized) > NAME_MAX_LENGTH) {
    add(
      "error",
      "name-too-long",
      "name",
      `name is ${codePoints(normalized)} characters; the limit is ${NAME_MAX_LENGTH}`,
    );
  }
  if (!/^[a-z0-9-]+$/.test(normalized)) {
    const upper = /[A-Z]/.test(normalized);
    add(
      "error",
      "name-invalid-chars",
      "name",
      `name "${name}" may contain only lowercase letters a–z, digits and hyphens${upper ? " (it has uppercase letters)" : ""}`,
    );
  }
  if (normalized.startsWith("-") || normalized.endsWith("-")) {
    add("error", "name-hyphen-edge", "name", `name "${name}" must not start or end with a hyphen`);
  }
  if (normalized.includes("--")) {
    add(
      "error",
      "name-double-hyphen",
      "name",
      `name "${name}" must not contain consecutive hyphens`,
    );
  }
  if (normalized !== folderName.normalize("NFKC")) {
    add(
      "error",
      "name-mismatch",
      "name",
      `name "${name}" does not match the folder name "${folderName}"`,
    );
  }
}

function checkDescription(description: unknown, add: Add): void {
  if (description === undefined) {
    add("error", "description-missing", "description", "the required field description is missing");
    return;
  }
  if (description === null) {
    add(
      "error",
      "description-empty",
      "description",
      "description must be 1–1024 characters; it has no value",
    );
    return;
  }
  if (typeof description !== "string") {
    add(
      "error",
      "description-not-string",
      "description",
      `description must be a string, not ${describeType(description)}`,
    );
    return;
  }
  if (description.trim() === "") {
    add("error", "description-empty", "description", "description must be 1–1024 characters");
    return;
  }
  const length = codePoints(description);
  if (length > DESCRIPTION_MAX_LENGTH) {
    add(
      "error",
      "description-too-long",
      "description",
      `description is ${length} characters; the limit is ${DESCRIPTION_MAX_LENGTH}`,
    );
  }
}

/**
 * The message for a metadata value that is not a string. A scalar is quoted as it was written
 * (`1.0` stays `"1.0"`, where the parsed number would print as `1`); a list or mapping cannot be
 * fixed by quoting, so the hint says what to do instead.
 */
function metadataHint(key: string, value: unknown, source: string | undefined): string {
  const what = `metadata value "${key}" is ${describeType(value)}; metadata maps strings to strings`;
  if (
    Array.isArray(value) ||
    (typeof value === "object" && value !== null && !(value instanceof Date))
  )
    return `${what}: write it as one string (a list as "a, b") or move it out of metadata`;
  const written = (source ?? (value instanceof Date ? value.toISOString() : String(value))).trim();
  return `${what} (quote it: ${JSON.stringify(written.replace(/^["']|["']$/g, ""))})`;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (value instanceof Date) return "a date";
  if (value instanceof Uint8Array) return "binary data";
  return typeof value === "object" ? "a mapping" : `a ${typeof value}`;
}

function checkBody(markdown: ParsedSkillMarkdown, file: string): LeveledFinding[] {
  const findings: LeveledFinding[] = [];
  const lines = countLines(markdown.body);
  if (markdown.body.trim() === "") {
    findings.push({
      level: "warning",
      code: "body-empty",
      message: "the body is empty; agents get no instructions when the skill is activated",
      file,
      line: markdown.bodyStartLine,
    });
  }
  if (lines > BODY_MAX_LINES) {
    findings.push({
      level: "warning",
      code: "body-too-long",
      message: `the body is ${lines} lines; keep it under ${BODY_MAX_LINES} and move detail to references/`,
      file,
      line: markdown.bodyStartLine + BODY_MAX_LINES,
    });
  }
  const tokens = estimateTokens(markdown.body);
  if (tokens > BODY_MAX_TOKENS) {
    findings.push({
      level: "warning",
      code: "body-too-many-tokens",
      message: `the body is about ${tokens} tokens (4 characters each); the recommendation is under ${BODY_MAX_TOKENS}`,
      file,
      line: markdown.bodyStartLine,
    });
  }
  return findings;
}
