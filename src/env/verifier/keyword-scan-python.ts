/**
 * The Python half of the keyword scan (see keyword-scan.ts for the definition of a keyword-only
 * check). Python test files are read structurally: the source is cut into *logical lines* the way
 * the Python tokenizer does (a bracket left open, a backslash at the end of a line or an open
 * triple-quoted string continues the line), so black-formatted code — a `def` header wrapped over
 * several lines, `assert (` with the `in` on the next line — reads like one statement. Each
 * function's body is then the logical lines indented deeper than its `def`.
 *
 * Why not Python's own `ast` module: the scan runs synchronously inside suite validation and the
 * task check, on machines where Python may be absent, and for every verifier file; a logical-line
 * reader in TypeScript needs no process per file and cannot be made to run verifier code. What it
 * gives up (type inference, data flow) the `ast` module would not give either.
 *
 * Per function the scan records what the body does:
 * - *reads*: `open(`, `.read_text(`, `.read()`, `.read_bytes(`, a helper that reads, or a fixture
 *   parameter that reads;
 * - *text operations*: a membership test `x in s` / `x not in s` (not the `in` of a `for`),
 *   `re.search/match/findall/fullmatch/finditer`, `.count(`, `.startswith(`, `.endswith(`,
 *   `.find(`, or a helper that reads and does them;
 * - *asserts*: `assert`, `pytest.fail(`, `self.assert…(`, `raise AssertionError`;
 * - *exercises*: runs a process (`subprocess`, `os.system`, `Popen`), imports at run time a module
 *   that is not a standard text/file/test helper, parses structure (`json.load`, `yaml.`, `toml`,
 *   `tomllib.`, `ast.`, `configparser`), compiles (`py_compile`, `compile(`), `exec`/`eval`, calls a
 *   name the file imports from a non-helper module, or calls a helper (or takes a fixture) that does
 *   any of these.
 * A `test*` function is keyword-only when it reads, does text operations, asserts, and exercises
 * nothing. Known misses (measured against hand labels in test/fixtures/keyword-only-labels.json):
 * a helper that parses with `ast` only to cut out a class's text, and `python -c` one-liners that
 * grep files, both count as exercising.
 */
import type { KeywordOnlyCheck, ScannedFile } from "./keyword-scan.js";

/** Modules whose use says nothing about the deliverable: files, text, tests, typing. */
const textHelperModules = new Set([
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
  "collections",
  "itertools",
  "functools",
  "dataclasses",
  "enum",
  "base64",
  "hashlib",
  "shutil",
  "tempfile",
  "_dependency_utils",
]);

export interface LogicalLine {
  /** 1-based line of the first physical line. */
  readonly line: number;
  readonly indent: number;
  /** The statement with comments removed; string literals kept. */
  readonly text: string;
  /** The statement with string literals blanked to `""` (code only). */
  readonly code: string;
}

/** Cut Python source into logical lines (brackets, backslashes and multi-line strings join). */
export function pythonLogicalLines(source: string): LogicalLine[] {
  const lines: LogicalLine[] = [];
  let text = "";
  let code = "";
  let depth = 0;
  let startLine = 1;
  let indent = 0;
  let line = 1;
  let atStart = true;
  let index = 0;
  const flush = () => {
    if (text.trim() !== "") lines.push({ line: startLine, indent, text, code });
    text = "";
    code = "";
    depth = 0;
    atStart = true;
  };
  while (index < source.length) {
    const character = source[index] as string;
    if (atStart) {
      if (character === " " || character === "\t") {
        index += 1;
        continue;
      }
      if (character === "\n") {
        line += 1;
        index += 1;
        continue;
      }
      const lineStart = source.lastIndexOf("\n", index - 1) + 1;
      indent = index - lineStart;
      startLine = line;
      atStart = false;
    }
    if (character === "#") {
      while (index < source.length && source[index] !== "\n") index += 1;
      continue;
    }
    if (character === "\\" && source[index + 1] === "\n") {
      text += " ";
      code += " ";
      line += 1;
      index += 2;
      continue;
    }
    if (character === "\n") {
      line += 1;
      index += 1;
      if (depth > 0) {
        text += " ";
        code += " ";
      } else flush();
      continue;
    }
    const literal = stringLiteralAt(source, index);
    if (literal !== undefined) {
      text += source.slice(index, literal.end);
      code += '""';
      line += literal.newlines;
      index = literal.end;
      continue;
    }
    if ("([{".includes(character)) depth += 1;
    else if (")]}".includes(character)) depth = Math.max(0, depth - 1);
    text += character;
    code += character;
    index += 1;
  }
  flush();
  return lines;
}

/** A string literal (with any r/b/f/u prefix) starting at `index`, or undefined. */
function stringLiteralAt(
  source: string,
  index: number,
): { end: number; newlines: number } | undefined {
  const prefix = /^[rbfuRBFU]{0,2}(?="|')/.exec(source.slice(index, index + 3));
  if (prefix === null) return undefined;
  // A prefix letter only starts a literal when it does not end a name (`bar"` is not `b"…`).
  if (prefix[0].length > 0 && /\w/.test(source[index - 1] ?? "")) return undefined;
  const open = index + prefix[0].length;
  const quote = source[open] as string;
  const triple = source.slice(open, open + 3) === quote.repeat(3);
  const delimiter = triple ? quote.repeat(3) : quote;
  const raw = /r/i.test(prefix[0]);
  let position = open + delimiter.length;
  while (position < source.length) {
    const character = source[position];
    if (character === "\\" && !raw) {
      position += 2;
      continue;
    }
    if (character === "\\" && raw) {
      position += 2;
      continue;
    }
    if (!triple && character === "\n") break;
    if (source.startsWith(delimiter, position)) {
      position += delimiter.length;
      break;
    }
    position += 1;
  }
  const body = source.slice(index, position);
  return { end: position, newlines: (body.match(/\n/g) ?? []).length };
}

interface PythonFunction {
  readonly name: string;
  readonly line: number;
  readonly parameters: readonly string[];
  readonly body: readonly LogicalLine[];
}

function pythonFunctions(lines: readonly LogicalLine[]): PythonFunction[] {
  const functions: PythonFunction[] = [];
  lines.forEach((logical, position) => {
    const header = /^(?:async\s+)?def\s+(\w+)\s*\(([\s\S]*)\)\s*(?:->[\s\S]*)?:/.exec(logical.code);
    if (header === null) return;
    const body: LogicalLine[] = [];
    for (const next of lines.slice(position + 1)) {
      if (next.indent <= logical.indent) break;
      body.push(next);
    }
    // A one-line body after the colon (`def f(): return x`) is body too.
    const inline = logical.text.slice(logical.text.indexOf(":", logical.text.lastIndexOf(")")) + 1);
    if (inline.trim() !== "") {
      body.unshift({
        ...logical,
        text: inline,
        code: logical.code.slice(logical.code.lastIndexOf(":") + 1),
      });
    }
    functions.push({
      name: header[1] ?? "",
      line: logical.line,
      parameters: splitParameters(header[2] ?? ""),
      body: body.filter((entry) => !isDocstring(entry)),
    });
  });
  return functions;
}

function splitParameters(list: string): string[] {
  return list
    .split(",")
    .map((parameter) => /^\s*\*{0,2}(\w+)/.exec(parameter)?.[1] ?? "")
    .filter((parameter) => parameter !== "" && parameter !== "self" && parameter !== "cls");
}

function isDocstring(line: LogicalLine): boolean {
  return line.code.trim() === '""';
}

const readsText = /\bopen\(|\.read_text\(|\.read\(\)|\.read_bytes\(/;
const textOperation =
  /\bre\.(?:search|match|findall|fullmatch|finditer)\(|\.(?:search|match|findall|fullmatch)\(|\.count\(|\.startswith\(|\.endswith\(|\.find\(/;
const asserts =
  /(?:^|;)\s*assert\b|\bpytest\.fail\(|\bself\.assert\w*\(|\braise\s+AssertionError\b/m;
const exercises =
  /\bsubprocess\b|\bos\.system\(|\bos\.popen\(|\bPopen\(|\bimportlib\b|__import__\(|\brunpy\b|\bexec\(|\beval\(|\bjson\.loads?\(|\byaml\.|\b(?:tomllib|tomli|toml)\.|\bast\.|\bconfigparser\b|\bpy_compile\b|(?:^|[^\w.])compile\(/;

/** A membership test `a in b` / `a not in b`, once every `for … in` is taken out. */
function hasMembershipTest(code: string): boolean {
  return /\bin\b/.test(code.replace(/\bfor\b[^:]*?\bin\b/g, " "));
}

/** Modules a local `import` / `from … import` names that are not text helpers. */
function importsDeliverable(code: string): boolean {
  for (const match of code.matchAll(
    /(?:^|;\s*)(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))/gm,
  )) {
    const modules = (match[1] ?? match[2] ?? "")
      .split(",")
      .map((name) => name.trim().split(/[.\s]/)[0]);
    if (
      modules.some(
        (module) =>
          module !== undefined &&
          module !== "" &&
          !textHelperModules.has(module) &&
          // Importing a parser is not using it; `yaml.safe_load(` is caught as parsing.
          !structureModules.has(module),
      )
    ) {
      return true;
    }
  }
  return false;
}

interface Traits {
  reads: boolean;
  textOperations: boolean;
  asserts: boolean;
  exercises: boolean;
}

function ownTraits(body: readonly LogicalLine[], projectNames: ReadonlySet<string>): Traits {
  const code = body.map((line) => line.code).join("\n");
  return {
    reads: readsText.test(code),
    textOperations: textOperation.test(code) || hasMembershipTest(code),
    asserts: asserts.test(code),
    exercises: exercises.test(code) || importsDeliverable(code) || callsAny(code, projectNames),
  };
}

/** Whether `code` calls one of `names`, plainly or as a method (`self._read(`). */
function callsHelper(code: string, name: string): boolean {
  return new RegExp(`(^|[^\\w.]|\\b(?:self|cls|[A-Z]\\w*)\\.)${name}\\s*\\(`).test(code);
}

function callsAny(code: string, names: ReadonlySet<string>): boolean {
  for (const name of names) {
    if (new RegExp(`(^|[^\\w.])${name}\\b\\s*[.(]`).test(code)) return true;
  }
  return false;
}

/** Names a file imports at top level from modules that are not text helpers. */
function projectImports(lines: readonly LogicalLine[]): Set<string> {
  const names = new Set<string>();
  for (const line of lines) {
    if (line.indent > 0) continue;
    const fromImport = /^from\s+([\w.]+)\s+import\s+([\s\S]+)$/.exec(line.code);
    const plainImport = /^import\s+([\w.]+)(?:\s+as\s+(\w+))?/.exec(line.code);
    if (fromImport !== null) {
      if (textHelperModules.has((fromImport[1] ?? "").split(".")[0] ?? "")) continue;
      for (const part of (fromImport[2] ?? "").replace(/[()]/g, "").split(",")) {
        const alias = /(\w+)\s*$/.exec(part.trim())?.[1];
        if (alias !== undefined) names.add(alias);
      }
    } else if (plainImport !== null) {
      const module = (plainImport[1] ?? "").split(".")[0] ?? "";
      if (!textHelperModules.has(module) && !structureModules.has(module)) {
        names.add(plainImport[2] ?? module);
      }
    }
  }
  return names;
}

/** Parsers: their use is caught by `exercises` itself (`yaml.safe_load(`), not as a project call. */
const structureModules = new Set(["json", "yaml", "toml", "tomllib", "tomli", "ast", "py_compile"]);

/** Traits of every helper (non-test function), with what the helpers it calls do folded in. */
function helperTraits(
  functions: readonly PythonFunction[],
  projectNames: ReadonlySet<string>,
): Map<string, Traits> {
  const traits = new Map<string, Traits>();
  const helpers = functions.filter((candidate) => !candidate.name.startsWith("test"));
  for (const helper of helpers) traits.set(helper.name, ownTraits(helper.body, projectNames));
  for (let changed = true; changed; ) {
    changed = false;
    for (const helper of helpers) {
      const own = traits.get(helper.name) as Traits;
      const code = helper.body.map((line) => line.code).join("\n");
      for (const [name, called] of traits) {
        if (name === helper.name || !callsHelper(code, name)) continue;
        changed = fold(own, called) || changed;
      }
    }
  }
  return traits;
}

/** Fold a called helper's traits into `into`; whether anything changed. */
function fold(into: Traits, called: Traits): boolean {
  const before = JSON.stringify(into);
  into.reads ||= called.reads;
  into.exercises ||= called.exercises;
  into.asserts ||= called.asserts;
  // A helper's text operations count only when the helper reads text itself (an assert-contains
  // helper); a file-walking helper's `".git" in dirpath` is about paths, not content.
  into.textOperations ||= called.reads && called.textOperations;
  return JSON.stringify(into) !== before;
}

/**
 * A test whose only work is one `python -c "…"` program that itself only opens files and greps
 * them (the generated v1 batch-6 style): running a grep in a child process is still a grep.
 */
function runsOnlyAGrepOneLiner(test: PythonFunction, projectNames: ReadonlySet<string>): boolean {
  const text = test.body.map((line) => line.text).join("\n");
  const programs = [
    ...text.matchAll(/["']-c["']\s*,\s*[rb]?("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g),
  ].map((match) => unescapePython((match[1] ?? "").slice(1, -1)));
  const [program] = programs;
  if (programs.length !== 1 || program === undefined) return false;
  const inner = ownTraits(pythonLogicalLines(program), new Set());
  if (!inner.reads || !inner.textOperations || !inner.asserts || inner.exercises) return false;
  // The test itself must add nothing that runs or imports code (the runner helper it calls is
  // the one-liner's launcher).
  return !ownTraits(test.body, projectNames).exercises;
}

function unescapePython(literal: string): string {
  return literal.replace(/\\(.)/g, (_match, character: string) =>
    character === "n" ? "\n" : character === "t" ? "\t" : character,
  );
}

export function scanPython(file: ScannedFile): KeywordOnlyCheck[] {
  const lines = pythonLogicalLines(file.content);
  const projectNames = projectImports(lines);
  const functions = pythonFunctions(lines);
  const helpers = helperTraits(functions, projectNames);
  const findings: KeywordOnlyCheck[] = [];
  for (const test of functions) {
    if (!test.name.startsWith("test")) continue;
    const traits = ownTraits(test.body, projectNames);
    const code = test.body.map((line) => line.code).join("\n");
    for (const [name, called] of helpers) {
      if (callsHelper(code, name) || test.parameters.includes(name)) fold(traits, called);
    }
    const grepsOnly = traits.reads && traits.textOperations && traits.asserts && !traits.exercises;
    if (!grepsOnly && !runsOnlyAGrepOneLiner(test, projectNames)) continue;
    findings.push({
      file: file.path,
      test: test.name,
      line: test.line,
      reason:
        "reads files as text and decides only by keywords in it, without importing, parsing or running the code",
    });
  }
  return findings;
}
