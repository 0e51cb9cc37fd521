import { describe, expect, it } from "vitest";
import {
  type GeneratedRequirement,
  inspectTestFile,
  longestSharedWordRun,
  normaliseText,
  pythonCompileFinding,
  RESTATEMENT_WORD_RUN,
  requirementFindings,
} from "./checks.js";

function requirement(id: string, text: string): GeneratedRequirement {
  return {
    id,
    background: "A small module.",
    requirement: text,
    fileOperations: ["calc.py"],
    acceptanceCriteria: ["the function returns the right value"],
  };
}

describe("requirement checks", () => {
  it("normalises case, punctuation and spacing", () => {
    expect(normaliseText("  Add  a MUL(a, b)!  ")).toBe("add a mul a b");
  });

  it("measures the longest shared run of words", () => {
    // "the quick brown fox" is the longest common run: 4 words.
    expect(longestSharedWordRun("see the quick brown fox run", "a the quick brown fox jumps")).toBe(
      4,
    );
    expect(longestSharedWordRun("nothing here", "entirely different")).toBe(0);
  });

  it("rejects duplicates and requirements that copy the skill body", () => {
    const skillBody =
      "Always validate both operands are numbers first and raise a TypeError naming the operand that is wrong before computing anything.";
    const copied = requirement(
      "copied",
      "Add pow(a, b); validate both operands are numbers first and raise a TypeError naming the operand that is wrong before computing.",
    );
    const result = requirementFindings(
      [requirement("mul", "Add mul(a, b)."), requirement("mul-2", "add MUL(a, b)"), copied],
      skillBody,
      3,
    );
    expect([...result.rejected].sort()).toEqual([1, 2]);
    expect(result.findings).toEqual([
      'requirement "mul-2" duplicates requirement "mul" (same requirement text); write a different one',
      expect.stringMatching(/^requirement "copied" restates the skill \(1[2-9] consecutive words/),
      "expected 3 distinct requirements, got 1 usable ones",
    ]);
    expect(RESTATEMENT_WORD_RUN).toBe(12);
  });
});

describe("test file checks", () => {
  it("counts tests and finds missing docstrings across multi-line signatures", () => {
    const content = [
      "def test_one():",
      '    """Documented."""',
      "    assert 1",
      "",
      "def test_two(",
      "    tmp_path,",
      "):",
      "    # a comment first",
      "    '''Also documented.'''",
      "",
      "async def test_three():",
      "    assert 1",
      "",
      "def helper():",
      "    return 1",
    ].join("\n");
    const check = inspectTestFile(content, 4, "test_x.py");
    expect(check.testCount).toBe(3);
    expect(check.missingDocstrings).toEqual(["test_three"]);
    expect(check.findings).toEqual([
      "test_x.py: 3 test functions; at least 4 are required",
      "test_x.py: tests without a docstring: test_three; every test needs one",
    ]);
  });

  it("flags tests that only grep the source", () => {
    const content = [
      "from pathlib import Path",
      "",
      "def test_grep():",
      '    """Looks for a word."""',
      '    assert "def mul" in Path("calc.py").read_text()',
    ].join("\n");
    const check = inspectTestFile(content, 1, "test_g.py");
    expect(check.findings).toHaveLength(1);
    expect(check.findings[0]).toMatch(/^test_g\.py:3 test_grep only searches source text/);
  });

  it("reports Python syntax errors through the real compiler", async () => {
    expect(
      await pythonCompileFinding("def test_a():\n    assert 1\n", "test_ok.py"),
    ).toBeUndefined();
    const problem = await pythonCompileFinding("def test_a(:\n    pass\n", "test_bad.py");
    expect(problem).toMatch(/^test_bad\.py does not compile: .*SyntaxError/);
  });
});
