/**
 * Static scan for checks that only grep source text for keywords: a test that reads a file as
 * text and decides only by whether some string or pattern occurs in it, without importing,
 * parsing, calling or running any of the code under test. Such a check passes for a comment
 * containing the keyword and fails for a correct solution that spells it differently, so it
 * measures wording, not behaviour.
 *
 * Python test files are read structurally (logical lines, helpers and fixtures followed): see
 * keyword-scan-python.ts. JavaScript/TypeScript heuristics (documented so a flagged check can be
 * argued with):
 * 1. Test functions are `test(...)` / `it(...)` (body = the balanced braces of the callback).
 * 2. A body *reads text* when it calls `readFileSync(`, `readFile(` or `fs.promises.readFile(`.
 * 3. A body *asserts on text* when it uses `.includes(`, `.match(`, `.test(`, `toContain(`,
 *    `toMatch(`, `assert.match(`, `.indexOf(`.
 * 4. A body *exercises code* when it runs a process (`execSync`, `spawn`, `execFile`, `exec(`),
 *    imports at run time (`require(`, `import(`), parses structure (`JSON.parse`), or calls a name
 *    the file imports from a module that is not a standard file/text/test helper.
 * A test is flagged when it reads text and asserts on text and exercises nothing.
 */
import { scanPython } from "./keyword-scan-python.js";

export interface KeywordOnlyCheck {
  readonly file: string;
  readonly test: string;
  readonly line: number;
  readonly reason: string;
}

export interface ScannedFile {
  /** Path used in findings (relative to the verifier). */
  readonly path: string;
  readonly content: string;
}

const javascriptHelpers = new Set([
  "fs",
  "node:fs",
  "fs/promises",
  "node:fs/promises",
  "path",
  "node:path",
  "assert",
  "node:assert",
  "node:assert/strict",
  "assert/strict",
  "node:test",
  "vitest",
  "@jest/globals",
  "url",
  "node:url",
]);

const readsText = /\breadFileSync\(|\breadFile\(/;
const javascriptAssertsText =
  /\.includes\(|\.match\(|\.test\(|\btoContain\(|\btoMatch\(|\bassert\.match\(|\.indexOf\(/;
const javascriptRuns =
  /\bexecSync\(|\bexecFileSync\(|\bspawn(Sync)?\(|\bexecFile\(|\bexec\(|\brequire\(|\bimport\(|\bJSON\.parse\(|\beval\(|new Function\(/;

/** Find keyword-only checks in verifier files (Python and JavaScript/TypeScript test files). */
export function findKeywordOnlyChecks(files: readonly ScannedFile[]): KeywordOnlyCheck[] {
  const findings: KeywordOnlyCheck[] = [];
  for (const file of files) {
    if (file.path.endsWith(".py")) findings.push(...scanPython(file));
    else if (/\.(m|c)?(j|t)sx?$/.test(file.path)) findings.push(...scanJavascript(file));
  }
  return findings;
}

function scanJavascript(file: ScannedFile): KeywordOnlyCheck[] {
  const content = file.content;
  const projectNames = new Set<string>();
  for (const match of content.matchAll(
    /import\s+(?:type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/g,
  )) {
    if (javascriptHelpers.has(match[2] ?? "")) continue;
    for (const name of (match[1] ?? "").matchAll(/\w+/g)) {
      if (name[0] !== "as") projectNames.add(name[0]);
    }
  }
  const findings: KeywordOnlyCheck[] = [];
  for (const match of content.matchAll(/\b(?:test|it)\s*\(\s*(["'`])(.*?)\1/g)) {
    const start = content.indexOf("{", (match.index ?? 0) + match[0].length);
    if (start < 0) continue;
    const body = balancedBody(content, start);
    if (!readsText.test(body) || !javascriptAssertsText.test(body) || javascriptRuns.test(body)) {
      continue;
    }
    if (callsAny(body, projectNames)) continue;
    findings.push({
      file: file.path,
      test: match[2] ?? "",
      line: content.slice(0, match.index ?? 0).split("\n").length,
      reason:
        "reads source files as text and asserts that keywords occur, without importing or running the code",
    });
  }
  return findings;
}

function callsAny(body: string, names: ReadonlySet<string>): boolean {
  // Inside string literals a name is text, not a call: `"calc.py"` does not use module `calc`.
  const code = body.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
  for (const name of names) {
    if (new RegExp(`\\b${name}\\b\\s*[.(]`).test(code)) return true;
  }
  return false;
}

/** The text between the brace at `start` and its matching close (strings are not special-cased). */
function balancedBody(content: string, start: number): string {
  let depth = 0;
  for (let index = start; index < content.length; index += 1) {
    const character = content[index];
    if (character === "{") depth += 1;
    else if (character === "}") {
      depth -= 1;
      if (depth === 0) return content.slice(start, index + 1);
    }
  }
  return content.slice(start);
}

/**
 * The share of a verifier's tests that are keyword-only, and the sentence that names it as the
 * reason a verifier is weak: `keyword-only: 9 of 13 tests only grep source text for keywords (…)`.
 */
export function keywordOnlyShare(
  findings: readonly KeywordOnlyCheck[],
  testCount: number,
): { share: number; reason: string } {
  const share = testCount === 0 ? 0 : Math.min(1, findings.length / testCount);
  const named = findings
    .slice(0, 4)
    .map((finding) => finding.test)
    .join(", ");
  return {
    share,
    reason: `keyword-only: ${findings.length} of ${testCount} tests only grep source text for keywords (${named}${findings.length > 4 ? ", …" : ""}), so passing them measures wording, not behaviour`,
  };
}
