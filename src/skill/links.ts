/**
 * The local links of a skill's body: found outside code, resolved against the skill folder and
 * checked on disk, so a link that breaks once the skill is installed elsewhere is reported.
 * Part of validation (`validate.ts` runs `checkLinks` and re-exports the rest).
 */
import { lstat, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { isInside } from "./files.js";
import { blankInlineCode, fencedLines, MAX_SCANNED_LINE } from "./markdown.js";
import type { ParsedSkillMarkdown } from "./parse.js";
import type { LeveledFinding } from "./types.js";

/** A relative link target in the body, with its 1-based file line. */
export interface BodyLink {
  readonly target: string;
  readonly line: number;
}

/**
 * Link targets of inline links, images and reference definitions, outside fenced code blocks
 * and inline code spans (where brackets are code, not links). Lines over `MAX_SCANNED_LINE`
 * characters are skipped.
 */
export function extractLinks(body: string, bodyStartLine: number): BodyLink[] {
  const links: BodyLink[] = [];
  const lines = body.split("\n");
  const fenced = fencedLines(lines);
  // Link text may not contain brackets: this keeps the search linear on hostile input.
  const inline =
    /!?\[(?:[^[\]\\]|\\.)*\]\(\s*(<[^<>\n]*>|[^\s()<>]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)/g;
  const definition = /^ {0,3}\[[^[\]]+\]:\s*(<[^<>]*>|\S+)/;
  lines.forEach((rawLine, index) => {
    if (fenced[index] === true || rawLine.length > MAX_SCANNED_LINE) return;
    const line = blankInlineCode(rawLine);
    for (const match of line.matchAll(inline)) {
      links.push({ target: match[1] ?? "", line: bodyStartLine + index });
    }
    const reference = definition.exec(line);
    if (reference !== null) {
      links.push({ target: reference[1] ?? "", line: bodyStartLine + index });
    }
  });
  return links;
}

/** The local path a link target names, or undefined for URLs, anchors and absolute paths. */
export function localLinkPath(target: string): string | undefined {
  let path = target.startsWith("<") && target.endsWith(">") ? target.slice(1, -1) : target;
  if (path === "" || path.startsWith("#") || path.startsWith("/") || path.startsWith("\\"))
    return undefined;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path)) return undefined;
  path = path.replace(/[?#].*$/, "");
  if (path === "") return undefined;
  try {
    return decodeURIComponent(path);
  } catch {
    // A stray "%" is a literal character in a file name, as Markdown renderers read it.
    return path;
  }
}

/** Distinct local link targets checked on disk; a real skill links a handful. */
export const MAX_CHECKED_LINK_TARGETS = 1000;

export async function checkLinks(
  markdown: ParsedSkillMarkdown,
  realRoot: string,
  file: string,
): Promise<LeveledFinding[]> {
  const findings: LeveledFinding[] = [];
  // One file-system check per distinct target: a hostile body may repeat a link many times.
  const resolved = new Map<string, boolean>();
  for (const link of extractLinks(markdown.body, markdown.bodyStartLine)) {
    const local = localLinkPath(link.target);
    if (local === undefined) continue;
    const absolute = resolve(realRoot, local);
    if (!isInside(realRoot, absolute)) {
      findings.push({
        level: "warning",
        code: "link-outside-skill",
        message: `link "${link.target}" points outside the skill folder; it is missing once the skill is installed`,
        file,
        line: link.line,
      });
      continue;
    }
    let resolves = resolved.get(absolute);
    if (resolves === undefined && resolved.size >= MAX_CHECKED_LINK_TARGETS) {
      findings.push({
        level: "warning",
        code: "too-many-links",
        message: `the body links more than ${MAX_CHECKED_LINK_TARGETS} distinct local files; the rest were not checked`,
        file,
        line: link.line,
      });
      break;
    }
    if (resolves === undefined) {
      // Missing, a loop or unreadable: each is a link that does not resolve, the finding below.
      const exists = await lstat(absolute).catch(() => undefined);
      const real =
        exists === undefined ? undefined : await realpath(absolute).catch(() => undefined);
      resolves = real !== undefined && isInside(realRoot, real);
      resolved.set(absolute, resolves);
    }
    if (!resolves) {
      findings.push({
        level: "warning",
        code: "link-broken",
        message: `link "${link.target}" does not resolve to a file in the skill folder`,
        file,
        line: link.line,
      });
    }
  }
  return findings;
}
