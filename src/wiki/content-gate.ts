/**
 * The content gate: what a candidate *says and does*, judged before anything runs. The
 * executability gate only learns that code exited 0 in a sandbox without network; a snippet
 * that deletes a home folder, swallows its own errors or connects to an outside host exits 0
 * there too. So every file an entry would hold (its code, its overview, the source excerpt it
 * cites) goes through the skill audit's rules (`auditText`, the same rules `skill audit` runs on
 * a skill folder), plus the wiki's own rules about what a snippet's success means. A high
 * finding means the entry is written `flagged`, never `verified`, and its code is not run.
 */
import { auditText } from "../skill/audit.js";
import type { ContentFinding } from "./meta.js";

/** A wiki rule: one regular expression per language it applies to (`*`: every language). */
interface SnippetRule {
  readonly code: string;
  readonly severity: "high" | "medium";
  readonly message: string;
  readonly patterns: Readonly<Record<string, RegExp>>;
}

/** A host that is not this machine and not a documentation name (RFC 2606 / 6761). */
const HOST =
  /(?:https?:\/\/)?(?!(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|::1|\[::1\])\b)(?![\w.-]*\.(?:invalid|test|example|localhost)\b)(?!(?:www\.)?example\.(?:com|org|net)\b)(?:\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,})(?::\d+)?/;
/** The same host as a string literal (`OUTSIDE` in a rule): quoted, then a path or the quote. */
const OUTSIDE_HOST = new RegExp(`["'\`]${HOST.source}(?:[/"'\`]|$)`);

const SNIPPET_RULES: readonly SnippetRule[] = [
  {
    code: "swallowed-error",
    severity: "high",
    message:
      "swallows its own errors, so exit 0 does not mean it worked (the executability gate could not tell)",
    patterns: {
      python:
        /^\s*except\b[^:\n]*:\s*(?:(?:pass|\.\.\.|continue)\s*(?:#.*)?$|\n\s*(?:pass|\.\.\.|continue)\s*(?:#.*)?$)/m,
      javascript:
        /\bcatch\s*(?:\([^)]*\))?\s*\{\s*(?:\/\/[^\n]*\s*)*\}|\.catch\(\s*\(\s*\w*\s*\)\s*=>\s*(?:\{\s*\}|undefined|null)\s*\)|\.on\(\s*["'](?:error|uncaughtException|unhandledRejection)["']\s*,\s*(?:\([^)]*\)|\w+)\s*=>\s*(?:\{\s*\}|undefined|null)\s*\)/,
      bash: /\|\|\s*(?:true|:)\s*(?:$|[;#)])|^\s*set\s+\+e\b|\btrap\s+["']?(?:true|:|)["']?\s+ERR\b/m,
    },
  },
  {
    code: "outside-network",
    severity: "high",
    message:
      "opens a connection to a host outside this machine; the sandbox blocks it, an agent's machine would not",
    patterns: {
      python:
        /\b(?:socket\.create_connection|\.connect(?:_ex)?|urlopen|requests\.(?:get|post|put|request)|http\.client\.HTTPS?Connection|httpx\.\w+|aiohttp\.\w+)\s*\(\s*\(?\s*OUTSIDE/,
      javascript:
        /\b(?:net\.(?:connect|createConnection)|tls\.connect|https?\.(?:get|request)|fetch|new\s+WebSocket|axios\.\w+)\s*\(\s*(?:\{[^}]*?host\s*:\s*)?OUTSIDE/,
      // Shell words need no quotes: `HOST` is the bare host.
      bash: /\b(?:curl|wget|nc|ncat|ssh|scp|telnet)\b[^\n|;&]*?(?:\s|=)["']?HOST\b|\/dev\/tcp\//,
    },
  },
  {
    code: "destructive-delete",
    severity: "high",
    message:
      "deletes a folder outside its own working folder (an absolute path, the home folder or a parent)",
    patterns: {
      python:
        /\b(?:shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs)|(?:Path|pathlib\.Path)\s*\([^)]*\)\s*\.(?:unlink|rmdir))\s*\(\s*(?:["'](?:\/|~|\.\.)|os\.path\.expanduser|os\.environ|Path\.home|os\.getenv\s*\(\s*["']HOME)/,
      javascript:
        /\bfs(?:\.promises)?\.(?:rm|rmdir|rmSync|rmdirSync|unlink|unlinkSync)\s*\(\s*(?:["'`](?:\/|~|\.\.)|os\.homedir|process\.env\.HOME)/,
      bash: /\brm\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*["']?(?:\/[A-Za-z]|~|\$HOME|\$\{HOME\}|\.\.)/,
    },
  },
];

function patternFor(rule: SnippetRule, language: string): RegExp | undefined {
  const pattern = rule.patterns[language] ?? rule.patterns["*"];
  if (pattern === undefined) return undefined;
  return new RegExp(
    pattern.source.replace(/OUTSIDE/g, OUTSIDE_HOST.source).replace(/HOST/g, HOST.source),
    pattern.flags,
  );
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** The wiki's snippet rules on one program; exported for tests. */
export function snippetFindings(code: string, language: string, file: string): ContentFinding[] {
  const findings: ContentFinding[] = [];
  for (const rule of SNIPPET_RULES) {
    const pattern = patternFor(rule, language);
    if (pattern === undefined) continue;
    const match = pattern.exec(code);
    if (match === null) continue;
    const line = lineOf(code, match.index + (match[0].match(/^\s*/)?.[0].length ?? 0));
    findings.push({
      code: rule.code,
      severity: rule.severity,
      message: rule.message,
      file,
      line,
      rule_set: "wiki",
      evidence: (code.split("\n")[line - 1] ?? "").trim().slice(0, 200),
    });
  }
  return findings;
}

/** The files of an entry the content gate reads, by their path inside the entry. */
export interface ContentFiles {
  readonly overview: string;
  readonly code?: { readonly path: string; readonly text: string; readonly language: string };
  readonly excerpt: string;
}

/** The skill audit's rules on one text, as content findings on `file`. */
function auditedText(text: string, file: string): ContentFinding[] {
  return auditText(text, file).map((finding) => ({
    code: finding.code,
    severity: finding.severity,
    message: finding.message,
    file,
    ...(finding.line === undefined ? {} : { line: finding.line }),
    rule_set: "skill-audit",
    ...(finding.evidence === undefined ? {} : { evidence: finding.evidence.trim().slice(0, 200) }),
  }));
}

const rank = { high: 0, medium: 1, low: 2 } as const;

/** Sorted by severity, then file and line, so the record is stable. */
function sortedFindings(findings: ContentFinding[]): ContentFinding[] {
  return findings.sort(
    (left, right) =>
      rank[left.severity] - rank[right.severity] ||
      (left.file < right.file ? -1 : left.file > right.file ? 1 : 0) ||
      (left.line ?? 0) - (right.line ?? 0),
  );
}

/**
 * Every finding on a candidate's own files: the skill audit's rules on each file, the wiki's
 * snippet rules on the code. What the distiller read about the whole resource is judged once,
 * by `resourceFindings`, not copied into each entry.
 */
export function contentFindings(files: ContentFiles): ContentFinding[] {
  const findings = [
    ...auditedText(files.overview, "text/overview.md"),
    ...auditedText(files.excerpt, "source/excerpt.md"),
  ];
  if (files.code !== undefined) {
    findings.push(...auditedText(files.code.text, files.code.path));
    findings.push(...snippetFindings(files.code.text, files.code.language, files.code.path));
  }
  return sortedFindings(findings);
}

/**
 * The name a resource's own findings give the text they are on (what the distiller read about the
 * resource, a README excerpt or a title): a Markdown name, so the audit reads it as prose.
 */
export const RESOURCE_CONTEXT_FILE = "context.md";

/**
 * The findings about a resource as a whole: the skill audit's rules on what the distiller read
 * about it besides the unit (a repository's README excerpt, an article's title). Instructions
 * hidden there steer every skill distilled from the resource, so a high one flags each of them
 * (`contentGateDetail`), but the finding is recorded once, with the resource.
 */
export function resourceFindings(context: string): ContentFinding[] {
  return context === "" ? [] : sortedFindings(auditedText(context, RESOURCE_CONTEXT_FILE));
}

/**
 * The content gate's verdict: `fail` (the entry is `flagged`) when any finding on the entry's
 * own files is high, or when the resource it was distilled from has a high finding of its own
 * (recorded in `resources.json`, named here, not copied).
 */
export function contentGateDetail(
  findings: readonly ContentFinding[],
  resource?: { readonly path: string; readonly findings: readonly ContentFinding[] },
): {
  status: "pass" | "fail";
  detail: string;
} {
  const located = (finding: ContentFinding) =>
    `${finding.code} (${finding.file}${finding.line === undefined ? "" : `:${finding.line}`})`;
  const high = findings.filter((finding) => finding.severity === "high");
  const resourceHigh = (resource?.findings ?? []).filter((finding) => finding.severity === "high");
  const reasons: string[] = [];
  if (high.length > 0)
    reasons.push(`${high.length} high finding(s): ${high.map(located).join(", ")}`);
  if (resource !== undefined && resourceHigh.length > 0)
    reasons.push(
      `its resource ${resource.path} has ${resourceHigh.length} high finding(s) on what the distiller read about it (resources.json): ${resourceHigh.map((finding) => finding.code).join(", ")}`,
    );
  if (reasons.length > 0) return { status: "fail", detail: reasons.join("; ") };
  return {
    status: "pass",
    detail: findings.length === 0 ? "no findings" : `${findings.length} finding(s), none high`,
  };
}
