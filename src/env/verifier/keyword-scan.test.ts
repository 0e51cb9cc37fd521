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

  it("reads black-formatted tests as statements (wrapped headers, wrapped asserts, if-return-fail)", () => {
    const content = [
      "import os",
      "import pytest",
      "",
      "class TestWrapped:",
      "    def _read(self, rel):",
      "        with open(os.path.join('/workspace/r', rel)) as fh:",
      "            return fh.read()",
      "",
      "    def test_wrapped_header_is_read_whole_and_long_enough_to_wrap(",
      "        self,",
      "    ):",
      "        src = self._read('a.py')",
      "        assert (",
      '            "retry"',
      "            in src",
      '        ), "no retry"',
      "",
      "    def test_count_by_comprehension(self):",
      "        content = self._read('a.py')",
      "        found = sum(1 for word in ('a', 'b') if word in content)",
      "        assert found >= 1",
      "",
      "    def test_if_return_then_fail(self):",
      "        for name in ('a.py', 'b.py'):",
      "            if 'chain(' in self._read(name):",
      "                return",
      "        pytest.fail('no chain')",
      "",
      "    def test_only_lists_files(self):",
      "        found = [name for name in os.listdir('/workspace/r') if name.endswith('.py')]",
      "        assert found",
      "",
      "    def test_non_empty(self):",
      "        assert len(self._read('a.py')) > 0",
      "",
    ].join("\n");
    expect(
      findKeywordOnlyChecks([{ path: "test_w.py", content }]).map((finding) => [
        finding.test,
        finding.line,
      ]),
    ).toEqual([
      ["test_wrapped_header_is_read_whole_and_long_enough_to_wrap", 9],
      ["test_count_by_comprehension", 18],
      ["test_if_return_then_fail", 23],
    ]);
  });

  it("counts a python -c one-liner that only greps as a grep, and one that imports as running", () => {
    const content = [
      "import subprocess",
      "",
      "def _run(args):",
      "    return subprocess.run(['python', *args], capture_output=True, text=True)",
      "",
      "def test_grep_in_a_child():",
      `    result = _run(['-c', "c=open('src/index.ts').read(); assert 'connect' in c; print('PASS')"])`,
      "    assert 'PASS' in result.stdout",
      "",
      "def test_import_in_a_child():",
      `    result = _run(['-c', "import app; assert 'x' in open('app.py').read() and app.main()"])`,
      "    assert result.returncode == 0",
      "",
    ].join("\n");
    expect(
      findKeywordOnlyChecks([{ path: "test_c.py", content }]).map((finding) => finding.test),
    ).toEqual(["test_grep_in_a_child"]);
  });

  it("stays linear on hostile input (an unterminated string, deep brackets, a huge line)", () => {
    // Verifier files are untrusted: a file built to make the reader backtrack must not stall it.
    const content = `def test_x():\n    s = open("f").read()\n    assert "${"(".repeat(20000)}" in s ${"[".repeat(20000)}\n    x = """never closed ${"a ".repeat(50000)}`;
    const started = performance.now();
    findKeywordOnlyChecks([{ path: "test_h.py", content }]);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
