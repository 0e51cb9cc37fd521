/**
 * Static scan for checks that only grep source text for keywords: a test that reads a file as
 * text and asserts that some string or pattern occurs in it, without importing, calling or
 * running any of the code under test. Such a check passes for a comment containing the keyword
 * and fails for a correct solution that spells it differently, so it measures wording, not
 * behaviour.
 *
 * Heuristics (documented so a flagged check can be argued with):
 * 1. Test functions are found syntactically: Python `def test_*` (body = the following lines
 *    indented deeper), JavaScript/TypeScript `test(...)` / `it(...)` (body = the balanced braces
 *    of the callback).
 * 2. A body *reads text* when it calls `open(`, `.read_text(`, `.read()`, `readFileSync(`,
 *    `readFile(` or `fs.promises.readFile(`.
 * 3. A body *asserts on text* when it uses Python `in` / `not in` inside an `assert`, `re.search`,
 *    `re.match`, `re.findall`, `.count(`, `.startswith(`, `.endswith(`, or JavaScript `.includes(`,
 *    `.match(`, `.test(`, `toContain(`, `toMatch(`, `assert.match(`.
 * 4. A body *exercises code* when it runs a process (`subprocess`, `os.system`, `Popen`,
 *    `execSync`, `spawn`, `execFile`, `exec(`), imports at run time (`import `, `importlib`,
 *    `__import__`, `runpy`, `require(`, `import(`), parses structure (`json.`, `yaml.`, `toml`,
 *    `ast.`, `JSON.parse`), or calls a name the file imports from a module that is not a standard
 *    file/text/test helper (os, re, pathlib, sys, glob, io, textwrap, pytest, unittest, node:fs,
 *    node:path, node:assert, node:test, vitest…).
 * A test is flagged when it reads text and asserts on text and exercises nothing.
 */
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

const pythonHelpers = new Set([
  "os",
  "re",
  "pathlib",
  "sys",
  "glob",
  "io",
  "textwrap",
  "pytest",
  "unittest",
  "typing",
  "string",
  "fnmatch",
  "__future__",
]);
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

const readsText = /\bopen\(|\.read_text\(|\.read\(\)|\breadFileSync\(|\breadFile\(|\.read_bytes\(/;
const pythonAssertsText =
  /\bassert\b[^\n]*\s(not\s+)?in\s|\bre\.(search|match|findall|fullmatch)\(|\.count\(|\.startswith\(|\.endswith\(/;
const javascriptAssertsText =
  /\.includes\(|\.match\(|\.test\(|\btoContain\(|\btoMatch\(|\bassert\.match\(|\.indexOf\(/;
const pythonRuns =
  /\bsubprocess\b|\bos\.system\(|\bPopen\(|\bimport\s|\bimportlib\b|__import__\(|\brunpy\b|\bexec\(|\beval\(|\bjson\.|\byaml\.|\btoml|\bast\./;
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

function scanPython(file: ScannedFile): KeywordOnlyCheck[] {
  const lines = file.content.split("\n");
  const projectNames = new Set<string>();
  for (const line of lines) {
    const fromImport = /^from\s+([\w.]+)\s+import\s+(.+)$/.exec(line);
    const plainImport = /^import\s+([\w.]+)(?:\s+as\s+(\w+))?/.exec(line);
    if (fromImport !== null) {
      const module = (fromImport[1] ?? "").split(".")[0] ?? "";
      if (pythonHelpers.has(module)) continue;
      for (const part of (fromImport[2] ?? "").replace(/[()]/g, "").split(",")) {
        const alias = /(\w+)\s*$/.exec(part.trim())?.[1];
        if (alias !== undefined) projectNames.add(alias);
      }
    } else if (plainImport !== null) {
      const module = (plainImport[1] ?? "").split(".")[0] ?? "";
      if (!pythonHelpers.has(module)) projectNames.add(plainImport[2] ?? module);
    }
  }
  const findings: KeywordOnlyCheck[] = [];
  lines.forEach((line, index) => {
    const header = /^(\s*)(?:async\s+)?def\s+(test\w*)\s*\(/.exec(line);
    if (header === null) return;
    const indent = header[1]?.length ?? 0;
    const body: string[] = [];
    for (let next = index + 1; next < lines.length; next += 1) {
      const candidate = lines[next] ?? "";
      if (candidate.trim() === "") continue;
      const candidateIndent = /^\s*/.exec(candidate)?.[0].length ?? 0;
      if (candidateIndent <= indent) break;
      body.push(candidate);
    }
    const text = stripPythonDocstrings(body.join("\n"));
    if (!readsText.test(text) || !pythonAssertsText.test(text) || pythonRuns.test(text)) return;
    if (callsAny(text, projectNames)) return;
    findings.push({
      file: file.path,
      test: header[2] ?? "",
      line: index + 1,
      reason:
        "reads source files as text and asserts that keywords occur, without importing or running the code",
    });
  });
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

function stripPythonDocstrings(text: string): string {
  return text.replace(/("""|''')[\s\S]*?\1/g, "");
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
