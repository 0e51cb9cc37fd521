/**
 * Reading a skill: `SKILL.md` split into YAML frontmatter (with the line of every field) and
 * body, parsed with hostile-input limits (size, nesting, aliases), and a skill folder loaded
 * with its file tree and the findings of reading it.
 *
 * One file (~410 lines) on purpose: the frontmatter parser and the folder loader share the
 * located-YAML error mapping and the file limits, and every other skill module reads skills
 * through these two entry points; the file walk is already `files.ts`.
 */
import { lstat, readFile, realpath } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { isMap, isScalar } from "yaml";
import { fsOutcome } from "../core/fs.js";
import { lineAt as lineInYaml, parseLocated } from "../core/yaml.js";
import { isInside, type SkillTree, walkSkillFolder } from "./files.js";
import type { LeveledFinding } from "./types.js";

/** `SKILL.md` files larger than this are not read (1 MiB: a real one is a few KiB). */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;

export const SKILL_FILE_NAME = "SKILL.md";

/** The frontmatter and body of a `SKILL.md`, with where each field was written. */
export interface ParsedSkillMarkdown {
  /** The frontmatter mapping, or undefined when there is none usable. */
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined;
  /**
   * 1-based file line of each top-level key, and of `metadata.<key>` entries. For a key written
   * twice, the line of the last one: that is the value the frontmatter holds.
   */
  readonly fieldLines: ReadonlyMap<string, number>;
  /** The YAML source of each scalar `metadata.<key>` value, as written (`1.0`, not `1`). */
  readonly fieldSources?: ReadonlyMap<string, string>;
  /** The Markdown after the frontmatter, with `\n` line endings. */
  readonly body: string;
  /** 1-based file line on which the body starts. */
  readonly bodyStartLine: number;
  readonly findings: LeveledFinding[];
}

/**
 * Split `SKILL.md` text into frontmatter and body and parse the frontmatter as YAML. Never
 * throws: every defect (no frontmatter, no closing `---`, bad YAML, duplicate keys, a
 * frontmatter that is not a mapping, a BOM, CRLF) becomes a finding located in `file`.
 */
export function parseSkillMarkdown(source: string, file: string): ParsedSkillMarkdown {
  const findings: LeveledFinding[] = [];
  let text = source;
  if (text.startsWith("\uFEFF")) {
    findings.push({
      level: "warning",
      code: "skill-file-bom",
      message: "file starts with a byte-order mark; some agents then fail to see the frontmatter",
      file,
      line: 1,
    });
    text = text.slice(1);
  }
  if (/\r\n?/.test(text)) {
    findings.push({
      level: "warning",
      code: "crlf-line-endings",
      message: "file uses CRLF (or CR) line endings; LF is expected",
      file,
      line: 1 + (text.slice(0, text.search(/\r/)).match(/\n/g)?.length ?? 0),
    });
    text = text.replace(/\r\n?/g, "\n");
  }
  const lines = text.split("\n");
  const empty = { frontmatter: undefined, fieldLines: new Map<string, number>() };
  if ((lines[0] ?? "").trimEnd() !== "---") {
    findings.push({
      level: "error",
      code: "frontmatter-missing",
      message: 'file must start with a YAML frontmatter block opened by a "---" line',
      file,
      line: 1,
    });
    return { ...empty, body: text, bodyStartLine: 1, findings };
  }
  const closing = lines.findIndex((line, index) => index > 0 && line.trimEnd() === "---");
  if (closing === -1) {
    findings.push({
      level: "error",
      code: "frontmatter-unterminated",
      message: 'frontmatter opened on line 1 is never closed by a "---" line',
      file,
      line: 1,
    });
    return { ...empty, body: "", bodyStartLine: lines.length + 1, findings };
  }
  const body = lines.slice(closing + 1).join("\n");
  const bodyStartLine = closing + 2;
  const yamlText = lines.slice(1, closing).join("\n");
  const bytes = Buffer.byteLength(yamlText);
  if (bytes > MAX_FRONTMATTER_BYTES) {
    findings.push({
      level: "error",
      code: "frontmatter-too-large",
      message: `frontmatter is ${bytes} bytes; the limit is ${MAX_FRONTMATTER_BYTES} (the specification's fields fit in a few KiB)`,
      file,
      line: 1,
    });
    return { ...empty, body, bodyStartLine: closing + 2, findings };
  }
  if (bracketDepth(yamlText) > MAX_FRONTMATTER_NESTING) {
    findings.push({
      level: "error",
      code: "frontmatter-too-deep",
      message: `frontmatter nests brackets more than ${MAX_FRONTMATTER_NESTING} deep`,
      file,
      line: 1,
    });
    return { ...empty, body, bodyStartLine: closing + 2, findings };
  }
  const parsed = parseFrontmatterYaml(yamlText, file, findings);
  return { ...parsed, body, bodyStartLine, findings };
}

/**
 * Frontmatter larger than this is not parsed. The YAML parser's duplicate-key check is
 * quadratic in the number of keys and deep flow nesting is costly, so a hostile frontmatter
 * must be small; the specification's own fields fit in a few KiB.
 */
export const MAX_FRONTMATTER_BYTES = 16 * 1024;

/** Deeper `[`/`{` nesting than this is refused before parsing (see above). */
export const MAX_FRONTMATTER_NESTING = 64;

/** Deepest bracket nesting, counting brackets inside quoted strings too: an upper bound. */
function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const character of text) {
    if (character === "[" || character === "{") {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if ((character === "]" || character === "}") && depth > 0) {
      depth--;
    }
  }
  return deepest;
}

/** The YAML starts on file line 2, after the opening `---`. */
const YAML_LINE_OFFSET = 1;

/** Aliases expand; a hostile "billion laughs" frontmatter must fail, not exhaust memory. */
const MAX_ALIAS_COUNT = 50;

function parseFrontmatterYaml(
  yamlText: string,
  file: string,
  findings: LeveledFinding[],
): Pick<ParsedSkillMarkdown, "frontmatter" | "fieldLines" | "fieldSources"> {
  const fieldLines = new Map<string, number>();
  const fieldSources = new Map<string, string>();
  // Duplicate keys are reported (as findings below), not silently resolved.
  const { document, lineCounter } = parseLocated(yamlText, true);
  const lineAt = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineInYaml(lineCounter, offset) + YAML_LINE_OFFSET;

  let fatal = false;
  for (const error of document.errors) {
    const line = lineAt(error.pos[0]);
    if (error.code === "DUPLICATE_KEY") {
      const key = /^\s*([^:\n]{1,64}?)\s*:/.exec(yamlText.slice(error.pos[0]))?.[1];
      findings.push({
        level: "error",
        code: "yaml-duplicate-key",
        message: `a frontmatter key${key === undefined || key === "" ? "" : ` ("${key}")`} appears twice; agents disagree on which value wins (this one, the last, is what skillsmith reads)`,
        file,
        ...(line === undefined ? {} : { line }),
      });
    } else {
      fatal = true;
      findings.push({
        level: "error",
        code: "yaml-syntax",
        message: `frontmatter is not valid YAML: ${firstLine(error.message)}`,
        file,
        ...(line === undefined ? {} : { line }),
      });
    }
  }
  if (fatal) return { frontmatter: undefined, fieldLines };

  const contents = document.contents;
  if (!isMap(contents)) {
    const what =
      contents === null || (isScalar(contents) && contents.value === null)
        ? "empty"
        : isScalar(contents)
          ? "a single value"
          : "a list";
    findings.push({
      level: "error",
      code: "frontmatter-not-mapping",
      message: `frontmatter is ${what}; expected a YAML mapping of fields (name: ..., description: ...)`,
      file,
      line: 1 + YAML_LINE_OFFSET,
    });
    return { frontmatter: undefined, fieldLines };
  }

  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    findings.push({
      level: "error",
      code: "yaml-syntax",
      message: `frontmatter cannot be read: ${firstLine((error as Error).message)}`,
      file,
      line: 1 + YAML_LINE_OFFSET,
    });
    return { frontmatter: undefined, fieldLines };
  }

  for (const pair of contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (key === undefined) continue;
    const line = lineAt(isScalar(pair.key) ? pair.key.range?.[0] : undefined);
    // The last occurrence of a repeated key is the value `toJS` keeps, so findings about the
    // value must point at it.
    if (line !== undefined) fieldLines.set(key, line);
    if (key === "metadata" && isMap(pair.value)) {
      for (const entry of pair.value.items) {
        if (!isScalar(entry.key)) continue;
        const entryLine = lineAt(entry.key.range?.[0]);
        const entryKey = `metadata.${String(entry.key.value)}`;
        if (entryLine !== undefined) fieldLines.set(entryKey, entryLine);
        const range = isScalar(entry.value) ? entry.value.range : undefined;
        if (range !== undefined && range !== null)
          fieldSources.set(entryKey, yamlText.slice(range[0], range[1]));
      }
    }
  }
  return { frontmatter: value as Record<string, unknown>, fieldLines, fieldSources };
}

function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).trim();
}

/** A skill folder as read from disk, before the specification's rules are applied. */
export interface LoadedSkill {
  /** The path as the caller gave it; findings name files below it. */
  readonly path: string;
  /** The folder name the `name` field must equal. */
  readonly folderName: string;
  /** The resolved real path of the folder, when it is one. */
  readonly realPath: string | undefined;
  readonly tree: SkillTree | undefined;
  readonly markdown: ParsedSkillMarkdown | undefined;
  /** Folder- and file-level findings (not those of `markdown`). */
  readonly findings: LeveledFinding[];
}

/**
 * Read a skill folder: check the folder, list its files safely and parse its `SKILL.md`.
 * Never throws for anything about the folder's contents; every defect is a finding.
 */
export async function loadSkillFolder(path: string): Promise<LoadedSkill> {
  const findings: LeveledFinding[] = [];
  const skillFile = join(path, SKILL_FILE_NAME);
  const folderName = basename(resolve(path));
  const none = { path, folderName, realPath: undefined, tree: undefined, markdown: undefined };

  const folderStat = await fsOutcome(lstat(path));
  if (folderStat.kind !== "ok") {
    findings.push(
      folderStat.kind === "missing"
        ? { level: "error", code: "path-not-found", message: "no such file or folder", file: path }
        : unreadableFinding(path, folderStat.code),
    );
    return { ...none, findings };
  }
  const resolved = await fsOutcome(realpath(path));
  if (resolved.kind !== "ok") {
    findings.push(
      resolved.kind === "missing"
        ? {
            level: "error",
            code: "path-not-found",
            message: "the path is a symbolic link to nothing",
            file: path,
          }
        : unreadableFinding(path, resolved.code),
    );
    return { ...none, findings };
  }
  const realPath = resolved.value;
  const realStat = await lstat(realPath);
  if (!realStat.isDirectory()) {
    findings.push({
      level: "error",
      code: "not-a-directory",
      message: `a skill is a folder holding ${SKILL_FILE_NAME}; this path is a file`,
      file: path,
    });
    return { ...none, findings };
  }

  const tree = await walkSkillFolder(realPath, path);
  findings.push(...tree.findings);
  const markdown = await readSkillFile(realPath, skillFile, tree, findings);
  return { path, folderName, realPath, tree, markdown, findings };
}

/** A path that exists but cannot be read (permissions, a symbolic-link loop, an I/O error). */
function unreadableFinding(file: string, code: string): LeveledFinding {
  return {
    level: "error",
    code: "unreadable",
    message: `exists but cannot be read (${code})`,
    file,
  };
}

async function readSkillFile(
  realRoot: string,
  skillFile: string,
  tree: SkillTree,
  findings: LeveledFinding[],
): Promise<ParsedSkillMarkdown | undefined> {
  const absolute = join(realRoot, SKILL_FILE_NAME);
  const probed = await fsOutcome(lstat(absolute));
  if (probed.kind === "unreadable") {
    findings.push(unreadableFinding(skillFile, probed.code));
    return undefined;
  }
  const fileStat = probed.kind === "ok" ? probed.value : undefined;
  if (fileStat === undefined) {
    const wrongCase = tree.entries.find(
      (entry) => entry.path.toLowerCase() === "skill.md" && entry.path !== SKILL_FILE_NAME,
    );
    findings.push({
      level: "error",
      code: "skill-file-missing",
      message:
        wrongCase === undefined
          ? `the folder has no ${SKILL_FILE_NAME}`
          : `the folder has no ${SKILL_FILE_NAME} (found "${wrongCase.path}"; the name is case-sensitive)`,
      file: skillFile,
    });
    return undefined;
  }
  if (fileStat.isSymbolicLink()) {
    const target = await realpath(absolute).catch(() => undefined);
    // Outside, broken or looped links were already reported by the walk (`files.ts`).
    if (target === undefined || !isInside(realRoot, target)) return undefined;
  }
  const targetStat = fileStat.isSymbolicLink() ? await lstat(await realpath(absolute)) : fileStat;
  if (!targetStat.isFile()) {
    findings.push({
      level: "error",
      code: "skill-file-not-regular",
      message: `${SKILL_FILE_NAME} must be a regular file`,
      file: skillFile,
    });
    return undefined;
  }
  if (targetStat.size > MAX_SKILL_FILE_BYTES) {
    findings.push({
      level: "error",
      code: "skill-file-too-large",
      message: `${SKILL_FILE_NAME} is ${targetStat.size} bytes; the limit is ${MAX_SKILL_FILE_BYTES} (1 MiB)`,
      file: skillFile,
    });
    return undefined;
  }
  const read = await fsOutcome(readFile(absolute));
  if (read.kind !== "ok") {
    // Gone between the stat and the read is as unreadable as a permission error here.
    findings.push(unreadableFinding(skillFile, read.kind === "missing" ? "ENOENT" : read.code));
    return undefined;
  }
  const decoded = decodeText(read.value);
  if (decoded.kind !== "text") {
    findings.push({
      level: "error",
      code: decoded.kind === "binary" ? "skill-file-binary" : "skill-file-encoding",
      message:
        decoded.kind === "binary"
          ? `${SKILL_FILE_NAME} contains NUL bytes: it is a binary file, not Markdown`
          : `${SKILL_FILE_NAME} is not valid UTF-8`,
      file: skillFile,
      line: decoded.line,
    });
    return undefined;
  }
  return parseSkillMarkdown(decoded.text, skillFile);
}

export type DecodedText =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "binary" | "invalid-utf8"; readonly line: number };

/** Decode bytes as UTF-8 text, refusing binary content (any NUL byte) and invalid UTF-8. */
export function decodeText(bytes: Uint8Array): DecodedText {
  const nul = bytes.indexOf(0);
  if (nul !== -1) return { kind: "binary", line: lineOfByte(bytes, nul) };
  try {
    return {
      kind: "text",
      text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes),
    };
  } catch {
    // The fatal decoder's only failure is invalid UTF-8, which the result reports.
    return { kind: "invalid-utf8", line: 1 };
  }
}

function lineOfByte(bytes: Uint8Array, index: number): number {
  let line = 1;
  for (let position = 0; position < index; position++) if (bytes[position] === 10) line++;
  return line;
}
