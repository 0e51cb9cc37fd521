import { describe, expect, it } from "vitest";
import type { ChannelOutcome } from "./channel.js";
import type { PytestInventory } from "./inventory.js";
import { acceptedInventory, BATCH_ROOT, plainPytestCommand } from "./inventory-batch.js";

describe("plainPytestCommand", () => {
  it("reads `[NAME=value …] python -m pytest ARGS`", () => {
    expect(
      plainPytestCommand(
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider test_a.py --junitxml=junit.xml",
      ),
    ).toEqual({
      interpreter: "python3",
      assignments: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
      args: ["-q", "-p", "no:cacheprovider", "test_a.py", "--junitxml=junit.xml"],
    });
    expect(plainPytestCommand("/usr/bin/python3.11 -m pytest")).toMatchObject({
      interpreter: "/usr/bin/python3.11",
      args: [],
    });
  });

  it("leaves every other command to be taken alone, saying why", () => {
    for (const [command, why] of [
      ["python -m pytest test_a.py || true", /plain words/],
      ["cd tests && python -m pytest", /plain words/],
      ["python -m pytest 'test a.py'", /plain words/],
      ["python -m pytest $ARGS", /plain words/],
      ["pytest test_a.py", /not `python -m pytest/],
      ["bash test.sh", /not `python -m pytest/],
      ["python -m unittest", /not `python -m pytest/],
      ["PYTHONPATH=/workspace python -m pytest", /sets PYTHONPATH/],
      ["PYTEST_ADDOPTS=-x python -m pytest", /sets PYTEST_ADDOPTS/],
      ["LC_ALL=C python -m pytest", /sets LC_ALL/],
      ["PATH=/bin python -m pytest", /sets PATH/],
    ] as const) {
      expect(plainPytestCommand(command), command).toMatch(why);
    }
  });
});

describe("acceptedInventory", () => {
  const movedRoot = `${BATCH_ROOT}/3/verifier`;
  const inventory: PytestInventory = {
    kind: "pytest",
    collected: [{ id: "verifier:test_a.py::test_one", nodeid: "test_a.py::test_one" }],
    defined: [],
    modules: [
      {
        nodeid: "test_a.py",
        location: "verifier:test_a.py",
        file: "test_a.py",
        collected: true,
        functions: ["test_one"],
      },
    ],
    functionPatterns: ["test"],
    exitStatusPropagates: true,
    junitWritten: true,
    declaredPlugins: [],
    versions: { python: "3.11.2", pytest: "7.2.1" },
  };
  const outcome = (rootdir: string, path: string): ChannelOutcome =>
    ({
      connections: 1,
      violations: [],
      records: [
        { type: "start", rootdir, python: "3.11.2", pytest: "7.2.1" },
        {
          type: "collected",
          items: [{ nodeid: "test_a.py::test_one", path, kind: "function", name: "test_one" }],
        },
      ],
    }) as unknown as ChannelOutcome;

  it("accepts a collection rooted and held inside the moved verifier folder", () => {
    expect(
      acceptedInventory(inventory, outcome(movedRoot, `${movedRoot}/test_a.py`), { movedRoot }),
    ).toEqual({ kind: "taken", inventory });
  });

  it("refuses a root folder above it, a module outside it, a node id naming it, an opaque one", () => {
    expect(
      acceptedInventory(inventory, outcome("/", `${movedRoot}/test_a.py`), { movedRoot }),
    ).toMatchObject({ kind: "alone", reason: expect.stringMatching(/root folder \/ is outside/) });
    expect(
      acceptedInventory(inventory, outcome(movedRoot, "/workspace/repo/tests/test_a.py"), {
        movedRoot,
      }),
    ).toMatchObject({ kind: "alone", reason: expect.stringMatching(/outside the verifier/) });
    // A sibling whose name starts with the moved folder's is not inside it.
    expect(
      acceptedInventory(inventory, outcome(`${movedRoot}2`, `${movedRoot}2/test_a.py`), {
        movedRoot,
      }),
    ).toMatchObject({ kind: "alone" });
    const naming: PytestInventory = {
      ...inventory,
      collected: [
        {
          id: `verifier:test_a.py::test_one[${movedRoot}/data.json]`,
          nodeid: `test_a.py::test_one[${movedRoot}/data.json]`,
        },
      ],
    };
    expect(
      acceptedInventory(naming, outcome(movedRoot, `${movedRoot}/test_a.py`), { movedRoot }),
    ).toMatchObject({ kind: "alone", reason: expect.stringMatching(/names the verifier's batch/) });
    expect(
      acceptedInventory(
        { kind: "opaque", reason: "collecting timed out", junitChecks: 0 },
        outcome(movedRoot, `${movedRoot}/test_a.py`),
        { movedRoot },
      ),
    ).toMatchObject({ kind: "alone", reason: expect.stringMatching(/opaque in the batch/) });
  });
});
