import { describe, expect, it } from "vitest";
import { diagnoseCollectionError, moduleNamesOf } from "./diagnose.js";

/** pytest's report of a test module that failed to import, as pytest 7 prints it. */
function collectionError(line: string): string {
  return [
    "==================================== ERRORS ====================================",
    "_________________ ERROR collecting test_analyze_ci.py __________________________",
    "ImportError while importing test module '/workspace/tests/test_analyze_ci.py'.",
    "Traceback:",
    "test_analyze_ci.py:12: in <module>",
    "    from analyze_ci import analyze_ci",
    `E   ${line}`,
    "=========================== short test summary info ============================",
    "ERROR test_analyze_ci.py",
    "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
  ].join("\n");
}

describe("moduleNamesOf", () => {
  it("names a path as every suffix of its dotted module path", () => {
    expect(moduleNamesOf("src/pkg/mod.py")).toEqual(["src.pkg.mod", "pkg.mod", "mod"]);
    expect(moduleNamesOf("./pkg/__init__.py")).toEqual(["pkg"]);
    expect(moduleNamesOf("packaging_cli/")).toEqual(["packaging_cli"]);
    // Not importable: a name with a hyphen, a file that is not Python.
    expect(moduleNamesOf("my-tool/run.py")).toEqual([]);
    expect(moduleNamesOf("docs/guide.md")).toEqual([]);
  });
});

describe("diagnoseCollectionError", () => {
  it("calls a missing deliverable module failing as it should", () => {
    const diagnosis = diagnoseCollectionError({
      output: collectionError("ModuleNotFoundError: No module named 'analyze_ci'"),
      fileOperations: ["scripts/analyze_ci.py", "sample.log"],
    });
    expect(diagnosis.kind).toBe("deliverable-missing");
    expect(diagnosis.reason).toContain("scripts/analyze_ci.py");
  });

  it("counts the package above a deliverable as missing with it", () => {
    const diagnosis = diagnoseCollectionError({
      output: collectionError("ModuleNotFoundError: No module named 'examples'"),
      fileOperations: ["examples/manifest_gen/generator.py"],
    });
    expect(diagnosis.kind).toBe("deliverable-missing");
  });

  it("calls a name missing from a file the requirement modifies failing as it should", () => {
    const diagnosis = diagnoseCollectionError({
      output: collectionError(
        "ImportError: cannot import name 'ResilientTransport' from 'httpx._transports' (/workspace/httpx/httpx/_transports/__init__.py)",
      ),
      fileOperations: ["httpx/_transports/__init__.py"],
    });
    expect(diagnosis.kind).toBe("deliverable-missing");
  });

  it("calls a missing helper module, plugin or third-party package broken", () => {
    for (const missing of ["_dependency_utils", "yaml", "pytest_mock"]) {
      const diagnosis = diagnoseCollectionError({
        output: collectionError(`ModuleNotFoundError: No module named '${missing}'`),
        fileOperations: ["scripts/analyze_ci.py"],
        requirementText: "Write scripts/analyze_ci.py that parses logs.",
      });
      expect(diagnosis.kind, missing).toBe("broken");
      expect(diagnosis.reason, missing).toContain(missing);
    }
  });

  it("accepts a module the requirement's text asks for when File Operations omit it", () => {
    const diagnosis = diagnoseCollectionError({
      output: collectionError("ModuleNotFoundError: No module named 'sample_lib.core'"),
      fileOperations: [],
      requirementText: "Create `sample_lib/core.py` with a TextProcessor class.",
    });
    expect(diagnosis.kind).toBe("deliverable-missing");
  });

  it("tells a deliverable file read at collection from a fixture the verifier lacks", () => {
    const read = (path: string) =>
      collectionError(`FileNotFoundError: [Errno 2] No such file or directory: '${path}'`);
    expect(
      diagnoseCollectionError({
        output: read("/workspace/repo/config/app.yaml"),
        fileOperations: ["config/app.yaml"],
        workspaceMountPath: "/workspace/repo",
      }).kind,
    ).toBe("deliverable-missing");
    expect(
      diagnoseCollectionError({
        output: read("/workspace/tests/fixtures/expected.json"),
        fileOperations: ["config/app.yaml"],
        workspaceMountPath: "/workspace/repo",
      }).kind,
    ).toBe("broken");
  });

  it("calls a deliverable that exists but fails to load the agent's failure", () => {
    const output = [
      "test_calc.py:3: in <module>",
      "    from calc.add import add",
      '  File "/workspace/calc/calc/add.py", line 2',
      "    def add(a, b) return a + b",
      "E   SyntaxError: invalid syntax",
      "1 error during collection",
    ].join("\n");
    const diagnosis = diagnoseCollectionError({
      output,
      fileOperations: ["calc/add.py"],
      workspaceMountPath: "/workspace/calc",
    });
    expect(diagnosis.kind).toBe("deliverable-missing");
    expect(diagnosis.reason).toContain("calc/add.py");
  });

  it("calls a verifier that does not compile, or needs a plugin or fixture, broken", () => {
    expect(
      diagnoseCollectionError({
        output: collectionError("SyntaxError: unterminated string literal (detected at line 9)"),
        fileOperations: [],
      }).reason,
    ).toMatch(/does not compile/);
    expect(
      diagnoseCollectionError({
        output:
          "ERROR: usage: __main__.py [options] [file_or_dir]\n__main__.py: error: unrecognized arguments: --cov=app",
        fileOperations: [],
      }).reason,
    ).toMatch(/plugin/);
    expect(
      diagnoseCollectionError({
        output: "E       fixture 'mocker' not found\n>       available fixtures: cache, capfd",
        fileOperations: [],
      }).reason,
    ).toMatch(/fixture "mocker"/);
  });

  it("names the outer error when the missing module is deep in a helper's message", () => {
    const output = [
      "E   RuntimeError: Command failed in /workspace/packaging: python -m pip install -e .",
      "E   stderr=Traceback (most recent call last):",
      "E   ModuleNotFoundError: No module named 'flit_core'",
    ].join("\n");
    const diagnosis = diagnoseCollectionError({ output, fileOperations: ["scripts/demo.py"] });
    expect(diagnosis.kind).toBe("broken");
    expect(diagnosis.reason).toContain("flit_core");
    expect(diagnosis.reason).toContain("first error: RuntimeError: Command failed");
  });

  it("never calls an unrecognised crash anything but broken", () => {
    const diagnosis = diagnoseCollectionError({
      output: "Segmentation fault (core dumped)",
      fileOperations: ["a.py"],
    });
    expect(diagnosis.kind).toBe("broken");
    expect(diagnosis.reason).toContain("Segmentation fault");
  });
});
