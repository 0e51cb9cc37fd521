/**
 * Requirement documents: Markdown with four sections — Background, Requirement, File
 * Operations, Acceptance Criteria (protocol A) — or the public SWE-Skills-Bench v1 sections
 * Background, Files to Create/Modify, Requirements, Acceptance Criteria. A document with none of
 * these headings (a Harbor `instruction.md`) is accepted as free-form: all of it is the
 * requirement.
 */

export type RequirementField =
  | "background"
  | "requirement"
  | "fileOperations"
  | "acceptanceCriteria";

export interface Requirement {
  readonly id: string;
  readonly background: string;
  /** The intended change; includes any "Expected Functionality" section, which v1 data adds. */
  readonly requirement: string;
  /** Paths mentioned in the File Operations section, in order, without duplicates. */
  readonly fileOperations: string[];
  /** One entry per list item (or paragraph) of the Acceptance Criteria section. */
  readonly acceptanceCriteria: string[];
  /** `sections` when at least one known heading was found, `free` otherwise. */
  readonly form: "sections" | "free";
  /** The document as written; this is what an agent is given. */
  readonly raw: string;
}

export interface RequirementProblem {
  readonly severity: "error" | "warning";
  readonly line?: number;
  readonly field?: RequirementField;
  readonly message: string;
}

export interface ParsedRequirement {
  readonly requirement: Requirement;
  readonly problems: RequirementProblem[];
}

const SECTION_TITLES: Readonly<Record<string, RequirementField | "expected">> = {
  background: "background",
  context: "background",
  requirement: "requirement",
  requirements: "requirement",
  "file operations": "fileOperations",
  "files to create/modify": "fileOperations",
  "files to create / modify": "fileOperations",
  "files to create or modify": "fileOperations",
  "files to create": "fileOperations",
  "files to modify": "fileOperations",
  files: "fileOperations",
  "acceptance criteria": "acceptanceCriteria",
  "expected functionality": "expected",
};

const FIELD_TITLES: Readonly<Record<RequirementField, string>> = {
  background: "Background",
  requirement: "Requirement",
  fileOperations: "File Operations",
  acceptanceCriteria: "Acceptance Criteria",
};

interface Heading {
  readonly level: number;
  readonly title: string;
  /** 0-based index of the heading line. */
  readonly index: number;
}

function normaliseTitle(title: string): string {
  return title
    .replace(/[*_`]/g, "")
    .replace(/[:：]\s*$/, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/** ATX headings outside fenced code blocks. */
function findHeadings(lines: readonly string[]): Heading[] {
  const headings: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch?.[1] !== undefined) {
      const marker = fenceMatch[1];
      if (fence === undefined) fence = marker[0]?.repeat(3);
      else if (marker.startsWith(fence)) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const match = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      headings.push({ level: match[1].length, title: match[2], index });
    }
  });
  return headings;
}

export function parseRequirementMarkdown(id: string, raw: string): ParsedRequirement {
  const text = raw.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = text.split("\n");
  const headings = findHeadings(lines);
  const known = headings.filter((heading) => normaliseTitle(heading.title) in SECTION_TITLES);

  if (known.length === 0) {
    const body = text.trim();
    const problems: RequirementProblem[] =
      body === ""
        ? [{ severity: "error", field: "requirement", message: "the document is empty" }]
        : [];
    return {
      requirement: {
        id,
        background: "",
        requirement: body,
        fileOperations: [],
        acceptanceCriteria: [],
        form: "free",
        raw,
      },
      problems,
    };
  }

  // Sections live at the shallowest level where a known title appears; deeper headings
  // (e.g. "### Retry Logic" inside Requirements) belong to the section's text.
  const level = Math.min(...known.map((heading) => heading.level));
  const boundaries = headings.filter((heading) => heading.level <= level);
  const sections = new Map<RequirementField | "expected", { text: string[]; line: number }[]>();
  const problems: RequirementProblem[] = [];
  for (const [position, heading] of boundaries.entries()) {
    if (heading.level !== level) continue;
    const field = SECTION_TITLES[normaliseTitle(heading.title)];
    if (field === undefined) continue;
    const end = boundaries[position + 1]?.index ?? lines.length;
    const body = lines
      .slice(heading.index + 1, end)
      .join("\n")
      .trim();
    const list = sections.get(field) ?? [];
    list.push({ text: [body], line: heading.index + 1 });
    sections.set(field, list);
  }

  const joined = (field: RequirementField | "expected"): string =>
    (sections.get(field) ?? [])
      .flatMap((section) => section.text)
      .join("\n\n")
      .trim();

  const expected = joined("expected");
  const requirementText = [
    joined("requirement"),
    expected === "" ? "" : `### Expected Functionality\n\n${expected}`,
  ]
    .filter((part) => part !== "")
    .join("\n\n");
  const fileOperationsText = joined("fileOperations");
  const acceptanceText = joined("acceptanceCriteria");

  for (const field of [
    "background",
    "requirement",
    "fileOperations",
    "acceptanceCriteria",
  ] as const) {
    const present = sections.get(field);
    const mandatory = field === "requirement" || field === "acceptanceCriteria";
    if (present === undefined) {
      problems.push({
        severity: mandatory ? "error" : "warning",
        field,
        message: `missing section "${FIELD_TITLES[field]}"`,
      });
    } else if (joined(field) === "") {
      problems.push({
        severity: mandatory ? "error" : "warning",
        field,
        ...(present[0] === undefined ? {} : { line: present[0].line }),
        message: `section "${FIELD_TITLES[field]}" is empty`,
      });
    }
  }

  const acceptanceCriteria = listItems(acceptanceText);
  const fileOperations = mentionedPaths(fileOperationsText);
  if (fileOperationsText !== "" && fileOperations.length === 0) {
    const fileOperationsLine = sections.get("fileOperations")?.[0]?.line;
    problems.push({
      severity: "warning",
      field: "fileOperations",
      ...(fileOperationsLine === undefined ? {} : { line: fileOperationsLine }),
      message: 'section "File Operations" names no file path',
    });
  }

  return {
    requirement: {
      id,
      background: joined("background"),
      requirement: requirementText,
      fileOperations,
      acceptanceCriteria,
      form: "sections",
      raw,
    },
    problems,
  };
}

const LIST_ITEM = /^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$/;

/**
 * Top-level list items (continuation lines and nested items folded into their parent); when
 * the text has no list, its paragraphs.
 */
export function listItems(text: string): string[] {
  if (text.trim() === "") return [];
  const lines = text.split("\n");
  const items: string[] = [];
  let baseIndent: number | undefined;
  for (const line of lines) {
    const match = LIST_ITEM.exec(line);
    const indent = match?.[1]?.length ?? 0;
    if (match?.[2] !== undefined && (baseIndent === undefined || indent <= baseIndent)) {
      baseIndent = indent;
      items.push(match[2].trim());
    } else if (items.length > 0 && line.trim() !== "") {
      items[items.length - 1] =
        `${items[items.length - 1]} ${line.trim().replace(LIST_ITEM, "$2")}`;
    }
  }
  if (items.length > 0) return items;
  return text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .filter((paragraph) => paragraph !== "");
}

function looksLikePath(token: string): boolean {
  return (
    /^[\w.\-/@+]+$/.test(token) &&
    (token.includes("/") || /\.[A-Za-z0-9]+$/.test(token)) &&
    !/^\.+$/.test(token)
  );
}

/**
 * The part of a list item before its description: up to the first " — ", " – ", " - " or ": "
 * outside a code span. "- `httpx/_retry.py` (create) — `RetryTransport` class" → "`httpx/_retry.py` (create)".
 */
function itemHead(item: string): string {
  let inCode = false;
  for (let index = 0; index < item.length; index++) {
    const character = item[index];
    if (character === "`") inCode = !inCode;
    if (inCode) continue;
    const rest = item.slice(index);
    if (/^\s[—–-]\s/.test(rest) || /^:\s/.test(rest)) return item.slice(0, index);
  }
  return item;
}

/**
 * File paths named in a File Operations section. Only the head of each item counts (its
 * description often names classes such as `httpx.BaseTransport`, which look like paths); in the
 * head, code spans that look like paths, else the first word.
 */
export function mentionedPaths(text: string): string[] {
  const paths: string[] = [];
  const add = (candidate: string) => {
    const cleaned = candidate
      .trim()
      .replace(/^\.\//, "")
      .replace(/[,:;]+$/, "");
    if (looksLikePath(cleaned) && !paths.includes(cleaned)) paths.push(cleaned);
  };
  for (const item of listItems(text)) {
    const head = itemHead(item);
    const spans = [...head.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
    if (spans.length > 0) {
      for (const span of spans) add(span);
      continue;
    }
    add(head.replace(/\*\*/g, "").split(/\s+/)[0] ?? "");
  }
  return paths;
}
