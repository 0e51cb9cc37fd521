import { describe, expect, it } from "vitest";
import { findKeywordOnlyChecks } from "./keyword-scan.js";

const python = [
  "import re",
  "from pathlib import Path",
  "from calc import add",
  "",
  "def test_greps_source():",
  '    """Looks for the word."""',
  '    text = Path("calc.py").read_text()',
  '    assert "def add" in text',
  "",
  "def test_regex_on_source():",
  '    with open("calc.py") as handle:',
  "        source = handle.read()",
  '    assert re.search(r"return a \\+ b", source)',
  "",
  "def test_calls_code():",
  "    assert add(1, 2) == 3",
  "",
  "def test_reads_and_calls():",
  '    text = Path("calc.py").read_text()',
  '    assert "add" in text',
  "    assert add(2, 2) == 4",
  "",
  "def test_runs_program():",
  "    import subprocess",
  '    out = subprocess.run(["python3", "calc.py"], capture_output=True, text=True).stdout',
  '    assert "ok" in out',
  "",
  "def test_parses_json():",
  "    import json",
  '    data = json.loads(open("config.json").read())',
  '    assert "name" in data',
  "",
].join("\n");

const javascript = [
  'import { readFileSync } from "node:fs";',
  'import { test } from "node:test";',
  'import assert from "node:assert/strict";',
  'import { upper } from "../lib.mjs";',
  "",
  'test("greps", () => {',
  '  const text = readFileSync("lib.mjs", "utf8");',
  '  assert.ok(text.includes("toUpperCase"));',
  "});",
  "",
  'test("calls", () => {',
  '  assert.equal(upper("a"), "A");',
  "});",
  "",
  'test("reads and calls", () => {',
  '  const text = readFileSync("lib.mjs", "utf8");',
  '  assert.ok(text.includes("upper"));',
  '  assert.equal(upper("b"), "B");',
  "});",
  "",
].join("\n");

describe("findKeywordOnlyChecks", () => {
  it("flags Python tests that only grep source text", () => {
    const findings = findKeywordOnlyChecks([{ path: "tests/test_calc.py", content: python }]);
    expect(findings.map((finding) => [finding.test, finding.line])).toEqual([
      ["test_greps_source", 5],
      ["test_regex_on_source", 10],
    ]);
    expect(findings[0]?.file).toBe("tests/test_calc.py");
  });

  it("flags JavaScript tests that only grep source text", () => {
    const findings = findKeywordOnlyChecks([{ path: "t/lib.test.mjs", content: javascript }]);
    expect(findings.map((finding) => [finding.test, finding.line])).toEqual([["greps", 6]]);
  });

  it("does not mistake a file name in a string for a use of the module", () => {
    const content = [
      "import calc",
      "",
      "def test_file_name_only():",
      '    assert "def mul" in open("calc.py").read()',
      "",
      "def test_module_used():",
      '    assert "mul" in open("calc.py").read() and calc.mul(2, 3) == 6',
      "",
    ].join("\n");
    const findings = findKeywordOnlyChecks([{ path: "test_x.py", content }]);
    expect(findings.map((finding) => finding.test)).toEqual(["test_file_name_only"]);
  });

  it("ignores files that are not Python or JavaScript", () => {
    expect(findKeywordOnlyChecks([{ path: "README.md", content: python }])).toEqual([]);
  });
});
