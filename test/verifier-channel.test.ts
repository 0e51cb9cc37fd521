/**
 * Honest verifiers through skillsmith's pytest channel: real pytest (Debian's, 7.x, and pyenv's
 * when it has pytest), real sandboxes, `runVerifier`. Every shape a verifier commonly has —
 * parametrised tests, classes, nested classes, unittest cases, skips, xfail and xpass, fixture
 * errors, selection options, -x, a masked exit status, a module that only imports once the
 * deliverable exists, custom `python_functions` — must be scored exactly as pytest itself would
 * score it (statuses written out by hand below), with no flag and no evidence: integrity checks
 * that cry wolf would make every verdict indefensible.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import { runVerifier, verifierInventory } from "../src/env/verifier/run.js";
import type { VerifierResult, VerifierSpec } from "../src/env/verifier/types.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";

function pytestVersion(python: string): string | undefined {
  try {
    return execFileSync(python, ["-m", "pytest", "--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

const DEBIAN_PYTHON = "/usr/bin/python3";
const debianPytest = pytestVersion(DEBIAN_PYTHON);
const bubblewrap = await usableBubblewrap();
const sandbox: SandboxV1 = bubblewrap ?? new UnsafeSandbox();
const container = await availableContainerSandbox();

const CALC =
  "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b  # wrong on purpose\n";

/** Files of one verifier with every common shape of test; statuses by hand below. */
const SHAPES: Record<string, string> = {
  "tests/test_shapes.py": `import os
import sys
import unittest

import pytest

sys.path.insert(0, os.environ.get("SKILLSMITH_WORKSPACE", "/workspace/calc"))


def test_plain():
    from calc import add
    assert add(1, 2) == 3


@pytest.mark.parametrize("value, expected", [(1, 2), ("a b", "a ba b"), (2.5, 5.0)])
def test_double(value, expected):
    assert value + value == expected


@pytest.mark.parametrize("left", [1, 2])
@pytest.mark.parametrize("right", [10, 20])
def test_stacked(left, right):
    assert left < right


class TestCalc:
    def test_sub(self):
        from calc import sub
        assert sub(5, 3) == 2

    @pytest.mark.parametrize("n", [0, 1])
    def test_method_parametrised(self, n):
        assert n >= 0

    class TestNested:
        def test_inner(self):
            assert True


class TestCase(unittest.TestCase):
    def test_unittest_pass(self):
        self.assertEqual(1 + 1, 2)

    def test_unittest_fail(self):
        self.assertEqual(1 + 1, 3)


@pytest.mark.skip(reason="not yet")
def test_skipped():
    assert False


@pytest.mark.xfail(reason="known bug")
def test_expected_failure():
    assert False


@pytest.mark.xfail(reason="fixed since")
def test_unexpected_pass():
    assert True


@pytest.fixture
def broken():
    raise RuntimeError("fixture cannot start")


def test_fixture_error(broken):
    assert True


@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("fixture cannot stop")


def test_teardown_error(broken_teardown):
    assert broken_teardown == 1
`,
  "tests/conftest.py": `import pytest


def pytest_generate_tests(metafunc):
    if "generated" in metafunc.fixturenames:
        metafunc.parametrize("generated", [3, 4])


@pytest.fixture
def offset():
    return 1
`,
  "tests/test_generated.py": `def test_from_hook(generated, offset):
    assert generated + offset in (4, 5)
`,
};

/** Statuses pytest gives SHAPES against CALC (sub is wrong), by hand, as JUnit-style names. */
const SHAPES_EXPECTED: Record<string, string> = {
  "tests.test_shapes::test_plain": "pass",
  "tests.test_shapes::test_double[1-2]": "pass",
  "tests.test_shapes::test_double[a b-a ba b]": "pass",
  "tests.test_shapes::test_double[2.5-5.0]": "pass",
  "tests.test_shapes::test_stacked[10-1]": "pass",
  "tests.test_shapes::test_stacked[10-2]": "pass",
  "tests.test_shapes::test_stacked[20-1]": "pass",
  "tests.test_shapes::test_stacked[20-2]": "pass",
  "tests.test_shapes.TestCalc::test_sub": "fail",
  "tests.test_shapes.TestCalc::test_method_parametrised[0]": "pass",
  "tests.test_shapes.TestCalc::test_method_parametrised[1]": "pass",
  "tests.test_shapes.TestCalc.TestNested::test_inner": "pass",
  "tests.test_shapes.TestCase::test_unittest_pass": "pass",
  "tests.test_shapes.TestCase::test_unittest_fail": "fail",
  "tests.test_shapes::test_skipped": "skip",
  "tests.test_shapes::test_expected_failure": "skip",
  "tests.test_shapes::test_unexpected_pass": "pass",
  "tests.test_shapes::test_fixture_error": "error",
  "tests.test_shapes::test_teardown_error": "error",
  "tests.test_generated::test_from_hook[3]": "pass",
  "tests.test_generated::test_from_hook[4]": "pass",
};

function files(contents: Record<string, string>): NonNullable<VerifierSpec["files"]> {
  return Object.entries(contents).map(([path, content]) => ({ path, content }));
}

function statuses(result: VerifierResult): Record<string, string> {
  return Object.fromEntries(result.checks.map((check) => [check.name, check.status]));
}

let root: string;
let workspace: string;
const WORKSPACE_MOUNT = "/workspace/calc";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "verifier-channel-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh workspace holding the deliverable (`calc.py`) unless `withDeliverable` is false. */
async function freshWorkspace(name: string, withDeliverable = true): Promise<string> {
  workspace = join(root, name);
  await mkdir(workspace, { recursive: true });
  if (withDeliverable) await writeFile(join(workspace, "calc.py"), CALC);
  return workspace;
}

async function run(name: string, verifier: VerifierSpec, on: SandboxV1 = sandbox) {
  const path = await freshWorkspace(name);
  return runVerifier({
    sandbox: on,
    workspace: path,
    workspaceMountPath: WORKSPACE_MOUNT,
    verifier,
  });
}

function expectHonest(result: VerifierResult): void {
  expect({ flags: result.flags, evidence: result.evidence, source: result.source }).toEqual({
    flags: [],
    evidence: [],
    source: "channel",
  });
}

describe.skipIf(debianPytest === undefined)(
  `the pytest channel on honest verifiers (${sandbox.kind})`,
  () => {
    it("scores every shape of test as pytest does, canaries left out", async () => {
      const result = await run("shapes", {
        files: files(SHAPES),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider tests --junitxml=report.xml`,
        resultsFile: "report.xml",
        env: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
        timeoutMs: 60_000,
      });
      expectHonest(result);
      expect(statuses(result)).toEqual(SHAPES_EXPECTED);
      // 15 of 21 pass (by hand: every "pass" above).
      expect(result.passed).toBe(15);
      expect(result.total).toBe(21);
      // pytest itself ran the two canaries too: by hand, failed = test_sub, test_unittest_fail
      // and the must-fail canary; passed = the 14 plain passes, test_teardown_error's call phase
      // (pytest counts it as passed and its teardown as an error) and the must-pass canary.
      expect(result.stdout).toMatch(/\b3 failed, 16 passed\b/);
      expect(
        result.checks.find((check) => check.name.endsWith("TestCalc::test_sub"))?.message,
      ).toMatch(/assert 8 == 2/);
    });

    it("keeps the command's own selection (-k, --deselect) and puts deselected canaries back", async () => {
      const result = await run("selection", {
        files: files(SHAPES),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider tests -k "double or unittest" --deselect tests/test_shapes.py::TestCase::test_unittest_fail`,
        env: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
        timeoutMs: 60_000,
      });
      expectHonest(result);
      expect(statuses(result)).toEqual({
        "tests.test_shapes::test_double[1-2]": "pass",
        "tests.test_shapes::test_double[a b-a ba b]": "pass",
        "tests.test_shapes::test_double[2.5-5.0]": "pass",
        "tests.test_shapes.TestCase::test_unittest_pass": "pass",
      });
      // -k dropped the canaries; skillsmith's plugin put them back: 4 + 1 passed, 1 failed.
      expect(result.stdout).toMatch(/\b1 failed, 5 passed\b/);
    });

    it("accepts a session that -x stops at its first failure", async () => {
      const result = await run("exitfirst", {
        files: files({
          "test_x.py":
            "def test_a():\n    assert True\n\n\ndef test_b():\n    assert False\n\n\ndef test_c():\n    assert True\n",
        }),
        command: `${DEBIAN_PYTHON} -m pytest -x -q -p no:cacheprovider test_x.py`,
        timeoutMs: 60_000,
      });
      expectHonest(result);
      expect(statuses(result)).toEqual({
        "test_x::test_a": "pass",
        "test_x::test_b": "fail",
        "test_x::test_c": "error",
      });
      expect(result.checks[2]?.message).toBe("no outcome was reported");
    });

    it("accepts a command that hides pytest's exit status (|| true)", async () => {
      const result = await run("masked", {
        files: files({
          "test_m.py": "def test_a():\n    assert True\n\n\ndef test_b():\n    assert 1 == 2\n",
        }),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider test_m.py || true`,
        timeoutMs: 60_000,
      });
      expectHonest(result);
      expect(result.exitCode).toBe(0);
      expect(statuses(result)).toEqual({ "test_m::test_a": "pass", "test_m::test_b": "fail" });
    });

    it("names canaries to match custom python_functions and reads modules that need the deliverable from their source", async () => {
      const verifier: VerifierSpec = {
        files: files({
          "pytest.ini": "[pytest]\npython_functions = check_*\npython_classes = Check*\n",
          "test_needs_calc.py": `import pytest

from calc import add, sub


def check_add():
    assert add(2, 2) == 4


@pytest.mark.parametrize("a, b", [(1, 1), (2, 2), (3, 3)])
def check_sub_is_zero(a, b):
    assert sub(a, b) == 0


class CheckGroup:
    def check_inside(self):
        assert add(0, 0) == 0
`,
        }),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider test_needs_calc.py`,
        timeoutMs: 60_000,
      };
      const inventory = await verifierInventory({
        sandbox,
        workspaceMountPath: WORKSPACE_MOUNT,
        verifier,
      });
      // The empty workspace has no calc.py: the module is read from its source, with three
      // instances of the literal parametrisation, exactly (every argument is one it sets), and
      // exactly one of each test without marks or arguments.
      expect(inventory.kind === "pytest" ? inventory.defined : inventory).toEqual([
        {
          base: "workspace:test_needs_calc.py::check_add",
          nodeid: "test_needs_calc.py::check_add",
          min: 1,
          parametrised: false,
          exact: true,
        },
        {
          base: "workspace:test_needs_calc.py::check_sub_is_zero",
          nodeid: "test_needs_calc.py::check_sub_is_zero",
          min: 3,
          parametrised: true,
          exact: true,
        },
        {
          base: "workspace:test_needs_calc.py::CheckGroup::check_inside",
          nodeid: "test_needs_calc.py::CheckGroup::check_inside",
          min: 1,
          parametrised: false,
          exact: true,
        },
      ]);
      const result = await run("custom-names", verifier);
      expectHonest(result);
      expect(statuses(result)).toEqual({
        "test_needs_calc::check_add": "pass",
        "test_needs_calc::check_sub_is_zero[1-1]": "fail",
        "test_needs_calc::check_sub_is_zero[2-2]": "fail",
        "test_needs_calc::check_sub_is_zero[3-3]": "fail",
        "test_needs_calc.CheckGroup::check_inside": "pass",
      });
    });

    it("identifies tests by file, so a repository ini file that moves pytest's root folder changes nothing", async () => {
      // Inventory (empty workspace): no ini file, rootdir = tests/, node ids `test_r.py::…`. This
      // run: the repository's pytest.ini makes the workspace the rootdir, node ids `tests/test_r.py::…`.
      const verifier: VerifierSpec = {
        files: files({
          "tests/test_r.py":
            "def test_a():\n    assert True\n\n\ndef test_b():\n    assert False\n",
        }),
        command: `cd tests && ${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider .`,
        timeoutMs: 60_000,
      };
      const path = await freshWorkspace("moved-root");
      await writeFile(join(path, "pytest.ini"), "[pytest]\nmarkers =\n    slow: slow checks\n");
      const result = await runVerifier({
        sandbox,
        workspace: path,
        workspaceMountPath: WORKSPACE_MOUNT,
        verifier,
      });
      expectHonest(result);
      expect(statuses(result)).toEqual({
        "tests.test_r::test_a": "pass",
        "tests.test_r::test_b": "fail",
      });
    });

    it("accepts a plugin of the deliverable that the verifier itself loads with pytest_plugins", async () => {
      const verifier: VerifierSpec = {
        files: files({
          "test_plugin.py":
            'pytest_plugins = ["calcplugin"]\n\n\ndef test_fixture(doubled):\n    assert doubled == 4\n',
        }),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider test_plugin.py`,
        timeoutMs: 60_000,
      };
      const path = await freshWorkspace("declared-plugin");
      await writeFile(
        join(path, "calcplugin.py"),
        "import pytest\n\n\n@pytest.fixture\ndef doubled():\n    return 2 * 2\n",
      );
      const result = await runVerifier({
        sandbox,
        workspace: path,
        workspaceMountPath: WORKSPACE_MOUNT,
        verifier,
      });
      expectHonest(result);
      expect(statuses(result)).toEqual({ "test_plugin::test_fixture": "pass" });
    });

    it("flags a missing deliverable as a collection error, not as tampering", async () => {
      const verifier: VerifierSpec = {
        files: files({
          "test_needs_calc.py":
            "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n",
        }),
        command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider test_needs_calc.py`,
        timeoutMs: 60_000,
      };
      const path = await freshWorkspace("no-deliverable", false);
      const result = await runVerifier({
        sandbox,
        workspace: path,
        workspaceMountPath: WORKSPACE_MOUNT,
        verifier,
      });
      expect({ flags: result.flags, evidence: result.evidence }).toEqual({
        flags: ["collection-error"],
        evidence: [],
      });
      expect(result.passRatio).toBe(0);
      expect(result.checks).toEqual([
        {
          name: "test_needs_calc::test_add",
          status: "error",
          message: "not collected: a collection error stopped it",
        },
      ]);
    });

    it.skipIf(pytestVersion("python3") === undefined)(
      "works with the pytest first on PATH too (pyenv's, a newer major version here)",
      async () => {
        const result = await run("path-pytest", {
          files: files(SHAPES),
          command: "python3 -m pytest -q -p no:cacheprovider tests",
          env: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
          timeoutMs: 60_000,
        });
        expectHonest(result);
        expect(statuses(result)).toEqual(SHAPES_EXPECTED);
      },
    );

    it.skipIf(container === undefined)(
      "works in the container sandbox (a socket in a bind-mounted folder)",
      async () => {
        const result = await run(
          "container",
          {
            files: files(SHAPES),
            command: "python3 -m pytest -q -p no:cacheprovider tests --junitxml=report.xml",
            resultsFile: "report.xml",
            env: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
            timeoutMs: 120_000,
          },
          container,
        );
        expectHonest(result);
        expect(statuses(result)).toEqual(SHAPES_EXPECTED);
      },
    );

    it("works without a sandbox (--sandbox unsafe: host paths)", async () => {
      const result = await run(
        "unsafe",
        {
          files: files({
            "test_u.py": "def test_a():\n    assert True\n\n\ndef test_b():\n    assert False\n",
          }),
          command: `${DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider test_u.py --junitxml=u.xml`,
          resultsFile: "u.xml",
          timeoutMs: 60_000,
        },
        new UnsafeSandbox(),
      );
      expectHonest(result);
      expect(statuses(result)).toEqual({ "test_u::test_a": "pass", "test_u::test_b": "fail" });
    });
  },
);
