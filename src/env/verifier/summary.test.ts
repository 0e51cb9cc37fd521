import { describe, expect, it } from "vitest";
import { parseRunnerSummary } from "./summary.js";

const statuses = (output: string) =>
  parseRunnerSummary(output)?.checks.map((check) => `${check.name}:${check.status}`);

describe("parseRunnerSummary", () => {
  it("reads pytest's final line and names from -rA, filling unnamed skips", () => {
    const output = [
      "..F.s",
      "=========================== short test summary info ============================",
      "PASSED t.py::test_a",
      "PASSED t.py::test_b",
      "PASSED t.py::test_d",
      "SKIPPED [1] t.py:9: not yet",
      "FAILED t.py::test_c - assert 1 == 2",
      "==================== 1 failed, 3 passed, 1 skipped in 0.05s ====================",
    ].join("\n");
    const parsed = parseRunnerSummary(output);
    expect(parsed?.runner).toBe("pytest");
    expect(statuses(output)).toEqual([
      "t.py::test_a:pass",
      "t.py::test_b:pass",
      "t.py::test_d:pass",
      "t.py::test_c:fail",
      "pytest skip check 1:skip",
    ]);
    expect(parsed?.checks[3]?.message).toBe("assert 1 == 2");
  });

  it("counts pytest errors, xfail and xpass, and ignores deselected and warnings", () => {
    const output = "2 passed, 1 error, 1 xfailed, 1 xpassed, 3 deselected, 2 warnings in 1.20s";
    const checks = parseRunnerSummary(output)?.checks ?? [];
    expect(checks.map((check) => check.status)).toEqual(["pass", "pass", "pass", "error", "skip"]);
  });

  it("reads pytest's 'no tests ran' as no checks", () => {
    const parsed = parseRunnerSummary(
      "\n============================ no tests ran in 0.01s =============================\n",
    );
    expect(parsed?.runner).toBe("pytest");
    expect(parsed?.checks).toEqual([]);
  });

  it("reads node:test TAP, counting leaves and not parents", () => {
    const output = [
      "TAP version 13",
      "# Subtest: a",
      "ok 1 - a",
      "  ---",
      "  duration_ms: 1.2",
      "  ...",
      "# Subtest: outer",
      "    # Subtest: inner one",
      "    ok 1 - inner one",
      "    # Subtest: inner two",
      "    not ok 2 - inner two",
      "      ---",
      "      error: 'boom'",
      "      ...",
      "not ok 2 - outer",
      "# Subtest: c",
      "ok 3 - c # SKIP not yet",
      "1..3",
      "# tests 4",
      "# suites 0",
      "# pass 2",
      "# fail 2",
      "# cancelled 0",
      "# skipped 1",
      "# todo 0",
    ].join("\n");
    expect(parseRunnerSummary(output)?.runner).toBe("node-test");
    expect(statuses(output)).toEqual(["a:pass", "inner one:pass", "inner two:fail", "c:skip"]);
  });

  it("reads a node:test file that failed to load as a collection failure", () => {
    const output = [
      "TAP version 13",
      "# Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/w/no-such-file.mjs'",
      "# Subtest: /w/verifier/broken.test.mjs",
      "not ok 1 - /w/verifier/broken.test.mjs",
      "  ---",
      "  failureType: 'testCodeFailure'",
      "  ...",
      "1..1",
      "# tests 1",
      "# pass 0",
      "# fail 1",
    ].join("\n");
    const checks = parseRunnerSummary(output)?.checks;
    expect(checks?.map((check) => check.status)).toEqual(["error"]);
    expect(checks?.[0]?.message).toContain("collection failure");
  });

  it("reads node:test spec reporter counts when there are no per-test lines", () => {
    const output = [
      "✔ upper (0.5ms)",
      "✖ reverse (1.1ms)",
      "ℹ tests 2",
      "ℹ suites 0",
      "ℹ pass 1",
      "ℹ fail 1",
      "ℹ cancelled 0",
      "ℹ skipped 0",
      "ℹ todo 0",
      "ℹ duration_ms 41",
    ].join("\n");
    expect(statuses(output)).toEqual(["node-test check 1:pass", "node-test check 2:fail"]);
  });

  it("reads vitest's Tests line, not the Test Files line", () => {
    const output = [
      " ✓ src/a.test.ts (3 tests | 1 skipped) 5ms",
      " ❯ src/b.test.ts (2 tests | 1 failed) 7ms",
      "",
      " \u001b[2mTest Files\u001b[22m  1 failed | 1 passed (2)",
      "      \u001b[2mTests\u001b[22m  1 failed | 3 passed | 1 skipped (5)",
    ].join("\n");
    const parsed = parseRunnerSummary(output);
    expect(parsed?.runner).toBe("vitest");
    expect(parsed?.checks.map((check) => check.status)).toEqual([
      "pass",
      "pass",
      "pass",
      "fail",
      "skip",
    ]);
  });

  it("reads go test -v, counting subtests and not their parents", () => {
    const output = [
      "=== RUN   TestAdd",
      "--- PASS: TestAdd (0.00s)",
      "=== RUN   TestTable",
      "=== RUN   TestTable/one",
      "=== RUN   TestTable/two",
      "--- FAIL: TestTable (0.00s)",
      "    --- PASS: TestTable/one (0.00s)",
      "    --- FAIL: TestTable/two (0.00s)",
      "        x_test.go:12: wrong",
      "=== RUN   TestSkip",
      "    x_test.go:20: skipping",
      "--- SKIP: TestSkip (0.00s)",
      "FAIL",
      "exit status 1",
      "FAIL\texample.com/x\t0.003s",
    ].join("\n");
    expect(parseRunnerSummary(output)?.runner).toBe("go-test");
    expect(statuses(output)).toEqual([
      "TestAdd:pass",
      "TestTable/one:pass",
      "TestTable/two:fail",
      "TestSkip:skip",
    ]);
  });

  it("finds nothing in output without a known summary", () => {
    expect(parseRunnerSummary("hello\nworld\n")).toBeUndefined();
    expect(parseRunnerSummary("FAIL\texample.com/x [build failed]\n")).toBeUndefined();
  });
});
