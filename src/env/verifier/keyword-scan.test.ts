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

  it("sees reads through helper functions, methods and fixtures (the v1 verifiers' style)", () => {
    // Shaped like SWE-Skills-Bench v1 test files: a `_read` method, a module-level reader
    // wrapping `read_text`, a helper calling a helper, and a fixture returning a file's text.
    const content = [
      "import os",
      "import re",
      "import subprocess",
      "from pathlib import Path",
      "import pytest",
      "",
      "REPO = '/workspace/repo'",
      "",
      "def _text(rel):",
      "    return Path(REPO, rel).read_text()",
      "",
      "def _workflow(name):",
      "    return _text(os.path.join('.github/workflows', name))",
      "",
      "def _run(cmd):",
      "    return subprocess.run(cmd, shell=True, capture_output=True, text=True)",
      "",
      "@pytest.fixture",
      "def readme():",
      "    return _text('README.md')",
      "",
      "class TestRepo:",
      "    def _read(self, rel):",
      "        with open(os.path.join(REPO, rel)) as fh:",
      "            return fh.read()",
      "",
      "    def test_method_read(self):",
      "        assert 'retry' in self._read('client.py')",
      "",
      "    def test_nested_helper(self):",
      "        assert re.search(r'on:\\s*push', _workflow('ci.yml'))",
      "",
      "    def test_fixture(self, readme):",
      "        assert 'Install' in readme",
      "",
      "    def test_runs_the_cli(self):",
      "        out = _run('python cli.py --help').stdout",
      "        assert 'usage' in out",
      "",
      "    def test_reads_then_runs(self):",
      "        assert 'main' in self._read('cli.py')",
      "        assert _run('python cli.py').returncode == 0",
      "",
    ].join("\n");
    const findings = findKeywordOnlyChecks([{ path: "test_repo.py", content }]);
    expect(findings.map((finding) => finding.test)).toEqual([
      "test_method_read",
      "test_nested_helper",
      "test_fixture",
    ]);
  });

  it("does not take a file name such as pyproject.toml for parsing TOML", () => {
    const content = [
      "import re",
      "",
      "def test_build_system():",
      '    content = open("/workspace/p/pyproject.toml").read()',
      '    assert re.search(r"\\[build-system\\]", content)',
      "",
      "def test_parses():",
      "    import tomllib",
      '    data = tomllib.loads(open("/workspace/p/pyproject.toml").read())',
      '    assert "build-system" in data',
      "",
    ].join("\n");
    expect(
      findKeywordOnlyChecks([{ path: "test_p.py", content }]).map((finding) => finding.test),
    ).toEqual(["test_build_system"]);
  });
});
