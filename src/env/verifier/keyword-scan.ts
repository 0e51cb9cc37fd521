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
  /\bsubprocess\b|\bos\.system\(|\bPopen\(|\bimport\s|\bimportlib\b|__import__\(|\brunpy\b|\bexec\(|\beval\(|\bjson\.|\byaml\.|\b(?:tomllib|tomli|toml)\.|\bast\.|\bconfigparser\b|\bpy_compile\b/;
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

interface PythonFunction {
  readonly name: string;
  readonly line: number;
  readonly parameters: readonly string[];
  /** The body with docstrings, comments and string literals blanked (code only). */
  readonly code: string;
  /** The body with only docstrings and comments removed (string literals kept). */
  readonly text: string;
}

/** Every `def` of a Python file (at any depth), with its body: the lines indented deeper. */
function pythonFunctions(lines: readonly string[]): PythonFunction[] {
  const functions: PythonFunction[] = [];
  lines.forEach((line, index) => {
    const header = /^(\s*)(?:async\s+)?def\s+(\w+)\s*\(([^)]*)/.exec(line);
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
    const text = stripPythonComments(stripPythonDocstrings(body.join("\n")));
    functions.push({
      name: header[2] ?? "",
      line: index + 1,
      parameters: (header[3] ?? "")
        .split(",")
        .map((parameter) => /^\s*\*{0,2}(\w+)/.exec(parameter)?.[1] ?? "")
        .filter((parameter) => parameter !== "" && parameter !== "self" && parameter !== "cls"),
      code: blankStrings(text),
      text,
    });
  });
  return functions;
}

/** Whether `code` calls one of `names`, plainly or as a method (`self._read(`). */
function callsHelper(code: string, names: ReadonlySet<string>): boolean {
  for (const name of names) {
    if (new RegExp(`(^|[^\\w.]|\\b(?:self|cls)\\.)${name}\\s*\\(`).test(code)) return true;
  }
  return false;
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
  const functions = pythonFunctions(lines);
  const helpers = functions.filter((candidate) => !candidate.name.startsWith("test"));
  // Helpers that read files (`_read(path)`, `read_text` wrappers, fixtures returning a file's
  // text) or that run code (`_run(cmd)` around subprocess), found to a fixed point so a helper
  // calling a helper counts too.
  const readers = new Set<string>();
  const runners = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const helper of helpers) {
      if (
        !readers.has(helper.name) &&
        (readsText.test(helper.code) || callsHelper(helper.code, readers))
      ) {
        readers.add(helper.name);
        changed = true;
      }
      if (
        !runners.has(helper.name) &&
        (pythonRuns.test(helper.code) ||
          callsHelper(helper.code, runners) ||
          callsAny(helper.code, projectNames))
      ) {
        runners.add(helper.name);
        changed = true;
      }
    }
  }
  const findings: KeywordOnlyCheck[] = [];
  for (const test of functions) {
    if (!test.name.startsWith("test")) continue;
    const reads =
      readsText.test(test.code) ||
      callsHelper(test.code, readers) ||
      test.parameters.some((parameter) => readers.has(parameter));
    const runs =
      pythonRuns.test(test.code) ||
      callsHelper(test.code, runners) ||
      test.parameters.some((parameter) => runners.has(parameter));
    if (!reads || !pythonAssertsText.test(test.text) || runs) continue;
    if (callsAny(test.code, projectNames)) continue;
    findings.push({
      file: file.path,
      test: test.name,
      line: test.line,
      reason:
        "reads source files as text and asserts that keywords occur, without importing or running the code",
    });
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

function stripPythonDocstrings(text: string): string {
  return text.replace(/("""|''')[\s\S]*?\1/g, "");
}

/** `# …` to the end of the line, outside string literals (the literals are skipped whole). */
function stripPythonComments(text: string): string {
  return text.replace(/("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|#[^\n]*/g, (match, literal) =>
    literal === undefined ? "" : match,
  );
}

/** String literals blanked to `""`, so a file name such as "pyproject.toml" is not code. */
function blankStrings(code: string): string {
  return code.replace(/[rbfuRBFU]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g, '""');
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
