import { lstat, readFile, realpath } from "node:fs/promises";
import { extname, join } from "node:path";
import { InputError } from "../core/errors.js";
import { walkSkillFolder } from "./files.js";
import { blankInlineCode, fencedLines, lineLocator, MAX_SCANNED_LINE } from "./markdown.js";
import type { AuditFinding, AuditReport, AuditSeverity } from "./types.js";

/** Files larger than this are not scanned (reported as `file-not-scanned`). */
export const MAX_AUDIT_FILE_BYTES = 1024 * 1024;

/**
 * A static safety review of a skill folder. A skill is untrusted text and code that an agent
 * will read and may run, so every text file is scanned for hidden content, download-and-run
 * lines, credential reads, exfiltration and instructions that would override the user's task.
 * Heuristic by nature: it flags what a reviewer must look at, it does not prove safety.
 * Throws `InputError` only when `path` is not a folder at all.
 */
export async function auditSkillFolder(path: string): Promise<AuditReport> {
  const realRoot = await realpath(path).catch(() => undefined);
  const rootStat = realRoot === undefined ? undefined : await lstat(realRoot);
  if (realRoot === undefined || rootStat === undefined || !rootStat.isDirectory()) {
    throw new InputError(
      realRoot === undefined ? "path-not-found" : "not-a-directory",
      realRoot === undefined ? "no such skill folder" : "expected a skill folder, found a file",
      { file: path },
    );
  }
  const findings: AuditFinding[] = [];
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
  for (const entry of tree.entries) {
    if (entry.kind !== "file") continue;
    const file = join(path, entry.path);
    if (entry.size > MAX_AUDIT_FILE_BYTES) {
      findings.push({
        code: "file-not-scanned",
        severity: "low",
        message: `file is ${entry.size} bytes, over the ${MAX_AUDIT_FILE_BYTES}-byte scan limit; review it by hand`,
        file,
      });
      continue;
    }
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
    const text = textOf(bytes);
    if (text !== undefined) findings.push(...auditText(text, file));
  }
  return { path, findings: sortFindings(findings) };
}

/**
 * The text of a file, or undefined for binary content (images and other assets, recognised by
 * NUL bytes). UTF-16 with a byte-order mark is decoded too: it is full of NUL bytes, yet an
 * agent opening the file reads it as text.
 */
function textOf(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes);
  if (bytes.includes(0)) return undefined;
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

const structuralSeverity: Readonly<Record<string, AuditSeverity>> = {
  "symlink-outside": "high",
  unreadable: "medium",
  "special-file": "medium",
  "too-many-files": "medium",
  "too-deep": "medium",
};

const severityRank: Readonly<Record<AuditSeverity, number>> = { high: 0, medium: 1, low: 2 };

function sortFindings(findings: AuditFinding[]): AuditFinding[] {
  return findings.sort((left, right) =>
    left.file !== right.file
      ? left.file < right.file
        ? -1
        : 1
      : (left.line ?? 0) - (right.line ?? 0) ||
        severityRank[left.severity] - severityRank[right.severity],
  );
}

/**
 * Whether `then` matches somewhere after the first match of `first`. Two linear searches
 * instead of one `first.*then` pattern, which backtracks quadratically on hostile lines.
 */
function followedBy(line: string, first: RegExp, then: RegExp): boolean {
  const match = first.exec(line);
  return match !== null && then.test(line.slice(match.index + match[0].length));
}

interface LineRule {
  readonly code: string;
  readonly severity: AuditSeverity;
  readonly message: string;
  readonly test: (line: string) => boolean;
  /** Only Markdown and plain-text prose (outside code blocks) when true. */
  readonly proseOnly?: boolean;
}

const NETWORK_SENDER =
  /\b(curl|wget|nc|ncat|netcat|axios|urllib|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|\bfetch\s*\(|\brequests\.(post|put|get)\b|\bhttps?\.request\b/i;
const SECRET_VARIABLE =
  /\$\{?[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)[A-Z0-9_]*\}?|\$env:[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD)/;
const ENVIRONMENT_DUMP =
  /\bprintenv\b|(^|[|;&(`$]\s*)env\s*($|[|;&)`])|process\.env\b(?!\s*\.|\s*\[)|os\.environ\b(?!\s*\[|\s*\.get)|\bGet-ChildItem\s+env:|\bdir\s+env:/i;

const lineRules: readonly LineRule[] = [
  {
    code: "pipe-to-shell",
    severity: "high",
    message: "downloads code and runs it in a shell or interpreter without review",
    test: (line) =>
      followedBy(
        line,
        /\b(curl|wget)\b/i,
        /\|\s*(sudo\s+(-\S+\s+)*)?(env\s+)?((ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node)\b/i,
      ) ||
      /\b(ba|z|k|da)?sh\s+(-c\s+)?["']?\$\(\s*(curl|wget)\b/i.test(line) ||
      /\b(ba|z|k|da)?sh\s+<\(\s*(curl|wget)\b/i.test(line) ||
      followedBy(
        line,
        /\b(iex|invoke-expression)\b/i,
        /\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b/i,
      ) ||
      followedBy(
        line,
        /\b(iwr|irm|invoke-webrequest|invoke-restmethod)\b/i,
        /\|\s*(iex|invoke-expression)\b/i,
      ) ||
      followedBy(
        line,
        /\bbase64\s+(-d|--decode|-D)\b/i,
        /\|\s*(sudo\s+)?((ba|z|k|da)?sh|python[0-9.]*)\b/i,
      ),
  },
  {
    code: "credential-access",
    severity: "high",
    message: "reads credentials (SSH keys, cloud or registry tokens)",
    test: (line) =>
      /(~|\$HOME|\$\{HOME\}|%USERPROFILE%|\/home\/[^/\s]+|\/root)[/\\]\.ssh\b/.test(line) ||
      /\bid_(rsa|dsa|ecdsa|ed25519)\b/.test(line) ||
      /\.aws[/\\](credentials|config)\b/.test(line) ||
      /(^|[\s"'=(:/~])\.(netrc|git-credentials|pypirc|npmrc)\b/.test(line) ||
      /\.docker[/\\]config\.json\b|\.kube[/\\]config\b|\.config[/\\]gcloud\b|application_default_credentials\.json|\.azure[/\\]|\.config[/\\]gh[/\\]hosts\.yml/.test(
        line,
      ),
  },
  {
    code: "dotenv-access",
    severity: "medium",
    message: "mentions a .env file, which usually holds secrets; check the skill does not read it",
    test: (line) => /(^|[\s"'=(:/`])\.env(\.[\w-]+)?(?![\w-])(?!\s*\()/.test(line),
  },
  {
    code: "env-exfiltration",
    severity: "high",
    message: "sends the process environment (all variables, secrets included) over the network",
    test: (line) => NETWORK_SENDER.test(line) && ENVIRONMENT_DUMP.test(line),
  },
  {
    code: "secret-sent-to-url",
    severity: "medium",
    message: "sends a secret-named environment variable over the network; check the destination",
    test: (line) =>
      NETWORK_SENDER.test(line) && SECRET_VARIABLE.test(line) && !ENVIRONMENT_DUMP.test(line),
  },
  {
    code: "prompt-injection",
    severity: "high",
    message: "tells the agent to ignore its instructions or to hide actions from the user",
    test: (line) =>
      /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|other|user'?s?|system|task'?s?)\s+(instructions|directions|prompts?|rules|requests?|messages?)\b/i.test(
        line,
      ) ||
      /\b(do\s+not|don'?t|never)\s+(tell|inform|mention\s+(this\s+)?to|reveal\s+(this\s+)?to|notify|alert)\s+the\s+user\b/i.test(
        line,
      ) ||
      /\bwithout\s+(telling|informing|asking|notifying)\s+the\s+user\b/i.test(line),
  },
  {
    code: "destructive-command",
    severity: "high",
    message: "deletes the root or home folder recursively",
    test: (line) =>
      /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[-a-zA-Z]+\s+)*(\/|~\/?|\$HOME\/?|\/\*)(\s|$|["';])/.test(
        line,
      ),
  },
  {
    code: "absolute-path-override",
    severity: "medium",
    message:
      "tells the agent to put output at a fixed absolute path, which can override where the task wants it",
    proseOnly: true,
    test: (line) =>
      /\b(write|writes|save|saves|output|put|store|place|create|copy|move|redirect|log|send|dump)\b/i.test(
        line,
      ) &&
      /(^|[\s"'`(=:])(\/(tmp|var|etc|home|root|usr|opt|srv|mnt|Users|private|data|workspace)\/[^\s"'`)]*|[A-Za-z]:\\[^\s"'`)]+|~\/[^\s"'`)]+)/.test(
        line,
      ),
  },
];

/** Linear in the line, so it also runs on lines too long for the other rules. */
const BASE64_RULE: LineRule = {
  code: "base64-blob",
  severity: "medium",
  message: "long base64 blob: opaque content a reviewer cannot read",
  test: (line) => {
    // Inline images are legitimately base64; a reviewer can render them.
    const withoutImages = line.replace(/data:image\/[\w.+-]+;base64,[A-Za-z0-9+/=]+/gi, "");
    for (const match of withoutImages.matchAll(/[A-Za-z0-9+/_-]{120,}={0,2}/g)) {
      const blob = match[0];
      if (/[A-Z]/.test(blob) && /[a-z]/.test(blob) && /[0-9]/.test(blob)) return true;
    }
    return false;
  },
};

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
export function auditText(text: string, file: string): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const seen = new Set<string>();
  const add = (code: string, severity: AuditSeverity, message: string, line: number): void => {
    const key = `${code}:${line}`;
    if (seen.has(key)) return;
    seen.add(key);
    findings.push({ code, severity, message, file, line });
  };
  const isProse = PROSE_EXTENSIONS.has(extname(file).toLowerCase());
  const lines = text.split(/\r\n|\r|\n/);
  const fenced = isProse ? fencedLines(lines) : lines.map(() => false);

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
    const zeroWidth = content.match(ZERO_WIDTH);
    if (zeroWidth !== null) {
      add(
        "invisible-unicode",
        "medium",
        `invisible characters (${codePointList(zeroWidth)}) can hide or split words from a reviewer`,
        lineNumber,
      );
    }
    if (BASE64_RULE.test(content)) {
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
    for (const rule of lineRules) {
      if (rule.proseOnly === true && (!isProse || fenced[index] === true)) continue;
      if (rule.test(visible)) add(rule.code, rule.severity, rule.message, lineNumber);
    }
  });

  if (isProse || extname(file).toLowerCase() === ".html") {
    findings.push(...auditHtmlComments(text, file));
  }
  return findings;
}

const INSTRUCTION_WORDS =
  /\b(ignore|disregard|forget|override|instead|always|never|must|should|do not|don'?t|you are|you will|assistant|agent|model|system prompt|instructions?|execute|run|curl|wget|send|upload|post|download|secret|password|token|credential|ssh|key|delete|remove)\b/i;

function auditHtmlComments(text: string, file: string): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const lineOf = lineLocator(text);
  const pattern = /<!--([\s\S]*?)(-->|$)/g;
  const searched = extname(file).toLowerCase() === ".html" ? text : maskMarkdownCode(text);
  for (const match of searched.matchAll(pattern)) {
    const inner = (match[1] ?? "").trim();
    const line = lineOf(match.index ?? 0);
    if (match[2] !== "-->") {
      findings.push({
        code: "html-comment-unterminated",
        severity: "high",
        message: "an HTML comment is never closed: everything after it is hidden when rendered",
        file,
        line,
      });
      break;
    }
    // Single-token comments are tool directives (`prettier-ignore`, `toc`), not prose.
    if (inner === "" || /^[\w:./-]+(\s+[\w:./-]+)?$/.test(inner)) continue;
    if (INSTRUCTION_WORDS.test(inner)) {
      findings.push({
        code: "html-comment-instruction",
        severity: "high",
        message: `HTML comment hides instructions from a human reader but not from the agent: "${excerpt(inner)}"`,
        file,
        line,
      });
    } else if (inner.split(/\s+/).length >= 4) {
      findings.push({
        code: "html-comment-text",
        severity: "low",
        message: `HTML comment holds text a human reader will not see: "${excerpt(inner)}"`,
        file,
        line,
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
