import { createHash } from "node:crypto";
import { lstat, readFile, realpath } from "node:fs/promises";
import { extname, join, relative } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { warnsAgainst } from "./audit-negation.js";
import {
  BASE64_RULE,
  classifyComment,
  downloadTarget,
  isTemplateFile,
  LINE_RULES,
  shellNormalised,
} from "./audit-rules.js";
import { walkSkillFolder } from "./files.js";
import { blankInlineCode, fencedLines, lineLocator, MAX_SCANNED_LINE } from "./markdown.js";
import type { AuditFinding, AuditReport, AuditSeverity } from "./types.js";

/**
 * Files up to this size are scanned whole. The limit is the MCP Skills extension's (SEP-2640)
 * total size of one skill, 16 MiB: a skill file larger than that is not a skill any conforming
 * host must load, and scanning 16 MiB takes a few seconds at worst (measured here).
 */
export const MAX_AUDIT_FILE_BYTES = 16 * 1024 * 1024;

/** Bytes scanned per skill at most; files past the budget are `file-not-scanned` too. */
export const MAX_AUDIT_TOTAL_BYTES = 32 * 1024 * 1024;

/** Findings of one rule in one file past this are counted in one `too-many-findings`, not listed. */
export const MAX_FINDINGS_PER_RULE = 100;

/** Extensions of files an agent runs: scanned as text even when they hold NUL bytes. */
const SCRIPT_EXTENSIONS: ReadonlySet<string> = new Set([
  ".sh",
  ".bash",
  ".zsh",
  ".ksh",
  ".fish",
  ".py",
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
  ".rb",
  ".pl",
  ".php",
  ".ps1",
  ".psm1",
  ".bat",
  ".cmd",
  ".lua",
  ".r",
  ".md",
  ".txt",
  ".json",
  ".yaml",
  ".yml",
  ".toml",
]);

/**
 * A static safety review of a skill folder. A skill is untrusted text and code that an agent
 * will read and may run, so every text file is scanned for hidden content, download-and-run
 * lines, credential reads, exfiltration and instructions that would override the user's task.
 * Heuristic by nature: it flags what a reviewer must look at, it does not prove safety.
 * Throws `InputError` only when `path` is not a folder at all.
 */
export async function auditSkillFolder(path: string): Promise<AuditReport> {
  const realRoot = await unlessMissing(path, realpath(path));
  const rootStat = realRoot === undefined ? undefined : await lstat(realRoot);
  if (realRoot === undefined || rootStat === undefined || !rootStat.isDirectory()) {
    throw new InputError(
      realRoot === undefined ? "skill.path-not-found" : "skill.not-a-directory",
      realRoot === undefined ? "no such skill folder" : "expected a skill folder, found a file",
      { file: path },
    );
  }
  const findings: ScannedFinding[] = [];
  const tree = await walkSkillFolder(realRoot, path);
  for (const finding of tree.findings) {
    const severity = structuralSeverity[finding.code];
    if (severity !== undefined) {
      findings.push({
        code: finding.code,
        severity,
        message: finding.message,
        file: finding.file,
      });
    }
  }
  let budget = MAX_AUDIT_TOTAL_BYTES;
  for (const entry of tree.entries) {
    if (entry.kind !== "file") continue;
    const file = join(path, entry.path);
    // Fail closed: what is not scanned cannot be called safe, so it fails the audit.
    if (entry.size > MAX_AUDIT_FILE_BYTES || entry.size > budget) {
      findings.push({
        code: "file-not-scanned",
        severity: "high",
        message:
          entry.size > MAX_AUDIT_FILE_BYTES
            ? `file is ${entry.size} bytes, over the ${MAX_AUDIT_FILE_BYTES}-byte scan limit: it was not scanned, so the audit fails; review it by hand and record it in a baseline`
            : `the skill's files exceed the ${MAX_AUDIT_TOTAL_BYTES}-byte scan budget; this file was not scanned, so the audit fails`,
        file,
      });
      continue;
    }
    budget -= entry.size;
    let bytes: Buffer;
    try {
      bytes = await readFile(join(realRoot, entry.path));
    } catch (error) {
      findings.push({
        code: "unreadable",
        severity: "medium",
        message: `cannot read the file, so it was not scanned: ${(error as Error).message}`,
        file,
      });
      continue;
    }
    const text = textOf(bytes, entry.path);
    if (text !== undefined)
      findings.push(...auditText(text, file, { template: isTemplateFile(entry.path) }));
  }
  return { path, findings: withIds(sortFindings(findings), path) };
}

/**
 * The text of a file, or undefined for binary content (images and other assets, recognised by
 * NUL bytes). UTF-16 with a byte-order mark is decoded too: it is full of NUL bytes, yet an
 * agent opening the file reads it as text. A script (by extension or `#!`) is text whatever it
 * holds: a shell runs a script with a NUL byte past its first line, so one planted NUL must not
 * hide the rest of the file from the audit.
 */
function textOf(bytes: Buffer, relativePath: string): string | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes);
  const script =
    SCRIPT_EXTENSIONS.has(extname(relativePath).toLowerCase()) ||
    relativePath.startsWith("scripts/") ||
    (bytes[0] === 0x23 && bytes[1] === 0x21);
  if (bytes.includes(0) && !script) return undefined;
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes).replaceAll("\0", "");
}

/**
 * A stable id per finding: rule, file (relative to the skill) and the text of its line, hashed.
 * It survives the line moving up or down, so a reviewer's baseline keeps matching after edits
 * elsewhere in the file, and it changes when the flagged line itself changes.
 */
function withIds(findings: readonly ScannedFinding[], root: string): AuditFinding[] {
  return findings.map(({ evidence, ...finding }) => ({
    id: findingId(finding.code, relative(root, finding.file).split("\\").join("/"), evidence ?? ""),
    ...finding,
  }));
}

/** A finding with the text it was found in, which its id is computed from. */
export interface ScannedFinding extends Omit<AuditFinding, "id"> {
  readonly evidence?: string;
}

export function findingId(code: string, relativeFile: string, evidence: string): string {
  return createHash("sha256")
    .update(`${code}\0${relativeFile}\0${evidence.replace(/\s+/g, " ").trim()}`)
    .digest("hex")
    .slice(0, 16);
}

const structuralSeverity: Readonly<Record<string, AuditSeverity>> = {
  "symlink-outside": "high",
  unreadable: "medium",
  "special-file": "medium",
  "too-many-files": "medium",
  "too-deep": "medium",
};

const severityRank: Readonly<Record<AuditSeverity, number>> = { high: 0, medium: 1, low: 2 };

function sortFindings(findings: ScannedFinding[]): ScannedFinding[] {
  return findings.sort((left, right) =>
    left.file !== right.file
      ? left.file < right.file
        ? -1
        : 1
      : (left.line ?? 0) - (right.line ?? 0) ||
        severityRank[left.severity] - severityRank[right.severity],
  );
}

const PROSE_EXTENSIONS: ReadonlySet<string> = new Set([".md", ".markdown", ".txt", ".mdx", ""]);

/** Characters that change how text is displayed without being visible themselves. */
// An alternation, not a class: a class holding U+200D trips linters about joined emoji.
const ZERO_WIDTH = /\u200B|\u200C|\u200D|[\u2060-\u2064]|\u180E|\u00AD|\uFEFF/g;
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
const TAG_CHARACTER = /[\u{E0000}-\u{E007F}]/gu;

function codePointList(matches: readonly string[]): string {
  const unique = [...new Set(matches)].map(
    (character) =>
      `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`,
  );
  return unique.join(", ");
}

/** Scan one text file. Exported for tests and for auditing text that is not on disk yet. */
export function auditText(
  text: string,
  file: string,
  options: { readonly template?: boolean } = {},
): ScannedFinding[] {
  const findings: ScannedFinding[] = [];
  const seen = new Set<string>();
  const perRule = new Map<string, number>();
  const add = (code: string, severity: AuditSeverity, message: string, line: number): void => {
    const key = `${code}:${line}`;
    if (seen.has(key)) return;
    seen.add(key);
    const count = (perRule.get(code) ?? 0) + 1;
    perRule.set(code, count);
    if (count > MAX_FINDINGS_PER_RULE) return;
    const evidence = (lines[line - 1] ?? "").slice(0, MAX_SCANNED_LINE);
    findings.push({ code, severity, message, file, line, evidence });
  };
  const isProse = PROSE_EXTENSIONS.has(extname(file).toLowerCase());
  const lines = text.split(/\r\n|\r|\n/);
  const fenced = isProse ? fencedLines(lines) : lines.map(() => false);
  const downloaded = new Set<string>();

  lines.forEach((line, index) => {
    const lineNumber = index + 1;
    const content = index === 0 ? line.replace(/^\uFEFF/, "") : line;

    const tags = content.match(TAG_CHARACTER);
    if (tags !== null) {
      const hidden = tags
        .map((character) => String.fromCodePoint((character.codePointAt(0) ?? 0) - 0xe0000))
        .join("")
        .replace(/[^\x20-\x7E]/g, "");
      add(
        "unicode-tag-characters",
        "high",
        `invisible Unicode tag characters encode hidden text${hidden === "" ? "" : `: "${hidden.slice(0, 80)}"`}`,
        lineNumber,
      );
    }
    const bidi = content.match(BIDI_CONTROL);
    if (bidi !== null) {
      add(
        "bidi-control",
        "high",
        `bidirectional control characters (${codePointList(bidi)}) can make text read differently from what it does`,
        lineNumber,
      );
    }
    const zeroWidth = content.replace(EMOJI_JOINER, "").match(ZERO_WIDTH);
    if (zeroWidth !== null) {
      add(
        "invisible-unicode",
        "medium",
        `invisible characters (${codePointList(zeroWidth)}) can hide or split words from a reviewer`,
        lineNumber,
      );
    }
    if (BASE64_RULE.test(content, { downloaded })) {
      add(BASE64_RULE.code, BASE64_RULE.severity, BASE64_RULE.message, lineNumber);
    }
    if (content.length > MAX_SCANNED_LINE) {
      add(
        "long-line",
        "medium",
        `a line of ${content.length} characters: too long for a person to review, and not searched for commands`,
        lineNumber,
      );
      return;
    }

    const visible = content.replace(ZERO_WIDTH, "").replace(BIDI_CONTROL, "");
    const context = { downloaded };
    for (const rule of LINE_RULES) {
      if (rule.proseOnly === true && (!isProse || fenced[index] === true)) continue;
      if (!rule.test(visible, context)) continue;
      // Advice against the danger, in prose: a note for the reviewer, not a finding that blocks.
      const defensive =
        isProse &&
        fenced[index] !== true &&
        warnsAgainst(visible, (text) => rule.test(text, context));
      if (defensive)
        add(rule.code, "low", `${rule.message} (in a sentence that warns against it)`, lineNumber);
      else add(rule.code, rule.severity, rule.message, lineNumber);
    }
    const target = downloadTarget(shellNormalised(visible));
    if (target !== undefined) downloaded.add(target);
  });

  for (const [code, count] of perRule) {
    if (count <= MAX_FINDINGS_PER_RULE) continue;
    findings.push({
      code: "too-many-findings",
      severity: "medium",
      message: `${code}: ${count - MAX_FINDINGS_PER_RULE} more findings in this file are not listed (the first ${MAX_FINDINGS_PER_RULE} are)`,
      file,
      evidence: code,
    });
  }
  // Comments hide text only where the file is rendered: Markdown and plain text. An `.html`
  // template's comments are read as source, by the reviewer as by the agent.
  if (isProse) {
    findings.push(...auditHtmlComments(text, file, lines, options.template === true));
  }
  return findings;
}

/** A zero-width joiner inside an emoji sequence (👩‍💻) is how the emoji is spelled. */
const EMOJI_JOINER =
  /(?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})/gu;

function auditHtmlComments(
  text: string,
  file: string,
  lines: readonly string[],
  template: boolean,
): ScannedFinding[] {
  const findings: ScannedFinding[] = [];
  const lineOf = lineLocator(text);
  const pattern = /<!--([\s\S]*?)(-->|$)/g;
  const evidenceAt = (line: number) => (lines[line - 1] ?? "").slice(0, MAX_SCANNED_LINE);
  for (const match of maskMarkdownCode(text).matchAll(pattern)) {
    const inner = (match[1] ?? "").trim();
    const line = lineOf(match.index ?? 0);
    if (match[2] !== "-->") {
      findings.push({
        code: "html-comment-unterminated",
        severity: "high",
        message: "an HTML comment is never closed: everything after it is hidden when rendered",
        file,
        line,
        evidence: evidenceAt(line),
      });
      break;
    }
    const verdict = classifyComment(inner, { template });
    if (verdict === "instruction") {
      findings.push({
        code: "html-comment-instruction",
        severity: "high",
        message: `HTML comment hides instructions from a human reader but not from the agent: "${excerpt(inner)}"`,
        file,
        line,
        evidence: inner,
      });
    } else if (verdict === "text") {
      findings.push({
        code: "html-comment-text",
        severity: "low",
        message: `HTML comment holds text a human reader will not see: "${excerpt(inner)}"`,
        file,
        line,
        evidence: inner,
      });
    }
  }
  return findings;
}

/**
 * Blank out fenced code blocks and inline code spans, keeping offsets and line breaks: a
 * comment shown as code is visible to a human reader, so it hides nothing.
 */
function maskMarkdownCode(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const fenced = fencedLines(lines);
  return lines
    .map((line, index) => {
      if (fenced[index] === true) return blankKeepingBreaks(line);
      return line.length > MAX_SCANNED_LINE ? line : blankInlineCode(line);
    })
    .join("");
}

/** Spaces in place of every character but line breaks (a regex replace is slow per match). */
function blankKeepingBreaks(line: string): string {
  const ending = line.endsWith("\r\n") ? "\r\n" : line.endsWith("\n") ? "\n" : "";
  const content = line.slice(0, line.length - ending.length);
  // A lone CR is a line break too; keep it so line numbers stay right.
  if (content.includes("\r")) return line.replace(/[^\r\n]/g, " ");
  return " ".repeat(content.length) + ending;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

/** True when the report holds a finding that should fail the audit. */
export function hasHighSeverity(report: AuditReport): boolean {
  return report.findings.some((finding) => finding.severity === "high");
}
