import type { CheckResult, CheckStatus } from "./types.js";

export interface SummaryParse {
  readonly runner: "pytest" | "node-test" | "vitest" | "go-test";
  readonly checks: readonly CheckResult[];
}

/**
 * Read checks from a test runner's console output when it wrote no JUnit report. Per-check names
 * come from the runner's per-test lines when present (pytest `-v` / `-rA`, node:test TAP, go test
 * `-v`); otherwise only counts are known and checks get positional names (`pytest check 3`).
 * Returns undefined when no known summary is found.
 */
export function parseRunnerSummary(output: string): SummaryParse | undefined {
  const text = stripAnsi(output);
  return parsePytest(text) ?? parseNodeTest(text) ?? parseVitest(text) ?? parseGoTest(text);
}

export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes start with ESC.
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");
}

interface Counts {
  pass: number;
  fail: number;
  error: number;
  skip: number;
}

function anonymous(runner: string, counts: Counts): CheckResult[] {
  const checks: CheckResult[] = [];
  const add = (status: CheckStatus, count: number) => {
    for (let index = 0; index < count; index += 1) {
      checks.push({ name: `${runner} check ${checks.length + 1}`, status });
    }
  };
  add("pass", counts.pass);
  add("fail", counts.fail);
  add("error", counts.error);
  add("skip", counts.skip);
  return checks;
}

const pytestWords: Readonly<Record<string, keyof Counts | undefined>> = {
  passed: "pass",
  xpassed: "pass",
  failed: "fail",
  error: "error",
  errors: "error",
  skipped: "skip",
  // An expected failure is not a passing check of the required behaviour.
  xfailed: "skip",
};

/**
 * pytest's final line: `==== 3 passed, 1 failed, 2 skipped in 0.12s ====`, or without the rules
 * under `-q`. `deselected`, `warnings` and `rerun` are not checks.
 */
function parsePytest(text: string): SummaryParse | undefined {
  const lines = text.split("\n");
  let summary: string | undefined;
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = (lines[index] ?? "").trim();
    if (
      /^(=+ )?(\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(, )?)+ in [\d.]+s/.test(
        line,
      ) ||
      /^=+ no tests ran in [\d.]+s/.test(line)
    ) {
      summary = line;
      break;
    }
  }
  if (summary === undefined) return undefined;
  const counts: Counts = { pass: 0, fail: 0, error: 0, skip: 0 };
  for (const match of summary.matchAll(/(\d+) ([a-z]+)/g)) {
    const key = pytestWords[match[2] ?? ""];
    if (key !== undefined) counts[key] += Number(match[1]);
  }
  return { runner: "pytest", checks: mergeNamed("pytest", pytestNamedChecks(lines), counts) };
}

/**
 * The summary's counts are authoritative; per-test lines only supply names. Named checks are
 * used up to each status's count, and positional names fill the rest (pytest's `-rA` lists a
 * skip as `SKIPPED [1] file:line: reason`, without the test's name).
 */
function mergeNamed(runner: string, named: readonly CheckResult[], counts: Counts): CheckResult[] {
  const checks: CheckResult[] = [];
  const statuses: [CheckStatus, keyof Counts][] = [
    ["pass", "pass"],
    ["fail", "fail"],
    ["error", "error"],
    ["skip", "skip"],
  ];
  for (const [status, key] of statuses) {
    const known = named.filter((check) => check.status === status).slice(0, counts[key]);
    checks.push(...known);
    for (let index = known.length; index < counts[key]; index += 1) {
      checks.push({ name: `${runner} ${status} check ${index + 1}`, status });
    }
  }
  return checks;
}

/** `test_x.py::test_a PASSED [ 25%]` (verbose) or `FAILED test_x.py::test_b - msg` (`-rA`). */
function pytestNamedChecks(lines: readonly string[]): CheckResult[] {
  const byName = new Map<string, CheckResult>();
  const statusOf = (word: string): CheckStatus | undefined =>
    word === "PASSED" || word === "XPASS"
      ? "pass"
      : word === "FAILED"
        ? "fail"
        : word === "ERROR"
          ? "error"
          : word === "SKIPPED" || word === "XFAIL"
            ? "skip"
            : undefined;
  for (const raw of lines) {
    const line = raw.trim();
    const verbose = /^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b/.exec(line);
    const short = /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)(?: - (.*))?$/.exec(line);
    if (verbose !== null) {
      const status = statusOf(verbose[2] ?? "");
      if (status !== undefined) byName.set(verbose[1] ?? "", { name: verbose[1] ?? "", status });
    } else if (short !== null) {
      const status = statusOf(short[1] ?? "");
      const name = short[2] ?? "";
      if (status !== undefined) {
        byName.set(
          name,
          short[3] === undefined ? { name, status } : { name, status, message: short[3] },
        );
      }
    }
  }
  return [...byName.values()];
}

/**
 * node:test. With the TAP reporter (the default when output is not a terminal) each test prints
 * `ok N - name` / `not ok N - name`; subtests are indented and printed before their parent, so a
 * result line directly after a deeper one is a parent (a suite or a test with subtests) and is
 * not a check itself. Counts come from `# pass N` / `# fail N` (or `ℹ pass N` from the spec
 * reporter) only when no per-test lines are found.
 */
function parseNodeTest(text: string): SummaryParse | undefined {
  const lines = text.split("\n");
  const counts: Counts = { pass: 0, fail: 0, error: 0, skip: 0 };
  let sawCounts = false;
  for (const line of lines) {
    const match = /^(?:#|ℹ) (pass|fail|cancelled|skipped|todo) (\d+)\s*$/.exec(line.trim());
    if (match === null) continue;
    sawCounts = true;
    const value = Number(match[2]);
    if (match[1] === "pass") counts.pass += value;
    else if (match[1] === "fail") counts.fail += value;
    else if (match[1] === "cancelled") counts.error += value;
    else counts.skip += value;
  }
  if (!sawCounts) return undefined;
  interface TapLine {
    readonly indent: number;
    readonly check: CheckResult;
  }
  const results: TapLine[] = [];
  for (const line of lines) {
    const match = /^(\s*)(ok|not ok) \d+ - (.*?)(?: # (SKIP|TODO)\b.*)?$/.exec(line);
    if (match === null) continue;
    const name = match[3] ?? "";
    const status: CheckStatus =
      match[4] !== undefined ? "skip" : match[2] === "ok" ? "pass" : "fail";
    // node:test reports a test file that failed to load (import error, syntax error, a throw at
    // top level) as one failing test named after the file: that is a collection failure.
    const check: CheckResult =
      status === "fail" && testFilePattern.test(name)
        ? { name, status: "error", message: "collection failure: the test file did not load" }
        : { name, status };
    results.push({ indent: match[1]?.length ?? 0, check });
  }
  const leaves = results
    .filter((result, index) => {
      const previous = results[index - 1];
      return previous === undefined || previous.indent <= result.indent;
    })
    .map((result) => result.check);
  // Per-test lines win: the counts include parents of nested `test()` calls, which are not checks.
  return {
    runner: "node-test",
    checks: leaves.length > 0 ? leaves : anonymous("node-test", counts),
  };
}

const testFilePattern = /^\S*\/\S+\.(?:c|m)?[jt]sx?$/;

/** vitest: `      Tests  3 passed | 1 failed | 2 skipped (6)` (not the `Test Files` line). */
function parseVitest(text: string): SummaryParse | undefined {
  const line = text.split("\n").find((candidate) => /^\s*Tests\s{2,}\d+ /.test(candidate));
  if (line === undefined) return undefined;
  const counts: Counts = { pass: 0, fail: 0, error: 0, skip: 0 };
  for (const match of line.matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
    const value = Number(match[1]);
    if (match[2] === "passed") counts.pass += value;
    else if (match[2] === "failed") counts.fail += value;
    else counts.skip += value;
  }
  return { runner: "vitest", checks: anonymous("vitest", counts) };
}

/**
 * go test -v: `--- PASS: TestX (0.00s)`, `--- FAIL: ...`, `--- SKIP: ...`, subtests indented as
 * `TestX/case`. A test with subtests is their parent, not a check of its own. A package that did
 * not build prints `FAIL pkg [build failed]` and no results: no checks (a collection error).
 */
function parseGoTest(text: string): SummaryParse | undefined {
  const checks = new Map<string, CheckResult>();
  for (const line of text.split("\n")) {
    const match = /^\s*--- (PASS|FAIL|SKIP): (\S+)/.exec(line);
    if (match === null) continue;
    const status: CheckStatus =
      match[1] === "PASS" ? "pass" : match[1] === "FAIL" ? "fail" : "skip";
    checks.set(match[2] ?? "", { name: match[2] ?? "", status });
  }
  if (checks.size === 0) return undefined;
  const names = [...checks.keys()];
  const leaves = [...checks.values()].filter(
    (check) => !names.some((other) => other.startsWith(`${check.name}/`)),
  );
  return { runner: "go-test", checks: leaves };
}
