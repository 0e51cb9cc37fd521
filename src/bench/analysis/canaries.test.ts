import { describe, expect, it } from "vitest";
import { CANARY_LABEL, labelCanaryLines } from "./canaries.js";

const CANARIES = [
  { name: "test_fifteen_case", file: "test_tax.py", expect: "fail" as const },
  { name: "test_rounding_edge", file: "test_tax.py", expect: "pass" as const },
];

// The shape of pytest -q's output when the must-fail canary fails, written by hand.
const OUTPUT = [
  ".....F.                                                                  [100%]",
  "=================================== FAILURES ===================================",
  "______________________________ test_fifteen_case _______________________________",
  "    def test_fifteen_case():",
  "        values = [4, 5, 6]",
  ">       assert sum(values) == 17",
  "=========================== short test summary info ============================",
  "FAILED test_tax.py::test_fifteen_case - assert 15 == 17",
  "FAILED test_tax.py::test_fifteen_case_two - assert 1 == 2",
  "2 failed, 5 passed in 0.12s",
].join("\n");

describe("labelCanaryLines", () => {
  const lines = labelCanaryLines(OUTPUT, CANARIES).split("\n");

  it("marks each line naming a canary, and only those, whole names only", () => {
    expect(lines[2]).toContain(`${CANARY_LABEL}, made to fail on purpose`);
    expect(lines[3]).toContain(CANARY_LABEL);
    expect(lines[7]).toBe(
      `FAILED test_tax.py::test_fifteen_case - assert 15 == 17   \u2190 ${CANARY_LABEL}, made to fail on purpose`,
    );
    // A real test whose name starts with a canary's is the user's own.
    expect(lines[8]).toBe("FAILED test_tax.py::test_fifteen_case_two - assert 1 == 2");
    expect(lines[5]).toBe(">       assert sum(values) == 17");
  });

  it("says pytest's counts include the canaries", () => {
    expect(lines[9]).toBe(
      "2 failed, 5 passed in 0.12s   \u2190 these counts include 2 integrity canaries (1 must pass, 1 must fail), not your tests",
    );
  });

  it("leaves output without canaries as it is", () => {
    expect(labelCanaryLines(OUTPUT, [])).toBe(OUTPUT);
    expect(labelCanaryLines("", CANARIES)).toBe("");
  });
});
