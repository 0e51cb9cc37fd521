import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "./channel.js";
import { type InventoryRun, inventoryFromRun, moduleOf } from "./inventory.js";

const START: ChannelRecord = {
  type: "start",
  seq: 1,
  mode: "inventory",
  pid: 3,
  python: "3.11.2",
  pytest: "7.2.1",
  rootdir: "/verifier",
  python_functions: ["test"],
};
const FINISH: ChannelRecord = {
  type: "finish",
  seq: 9,
  exitstatus: 1,
  testsfailed: 1,
  testscollected: 2,
  shouldstop: null,
  shouldfail: null,
  maxfail: 0,
  replaced: [],
  unfinished: [],
};

function run(records: ChannelRecord[], overrides: Partial<InventoryRun> = {}): InventoryRun {
  return {
    outcome: { connections: 1, records, violations: [] },
    exitCode: 1,
    timedOut: false,
    junit: [],
    verifierFile: (path) =>
      path.startsWith("/verifier/") ? path.slice("/verifier/".length) : undefined,
    locate: (path) =>
      path.startsWith("/verifier/") ? `verifier:${path.slice("/verifier/".length)}` : path,
    output: "",
    ...overrides,
  };
}

describe("moduleOf", () => {
  it("takes the file part of a node id", () => {
    expect(moduleOf("a/test_x.py::T::t[1::2]")).toBe("a/test_x.py");
    expect(moduleOf("test_x.py")).toBe("test_x.py");
  });
});

describe("inventoryFromRun", () => {
  it("keeps collected ids, tests read from the source of modules that failed, and the calibrations", () => {
    const inventory = inventoryFromRun(
      run([
        START,
        {
          type: "collect-error",
          seq: 2,
          nodeid: "test_pkg.py",
          message: "ModuleNotFoundError: No module named 'pkg'",
          path: "/verifier/test_pkg.py",
          defined: [
            { base: "test_pkg.py::test_name", min: 1, parametrised: false },
            { base: "test_pkg.py::TestA::test_b", min: 2, parametrised: true },
          ],
          declared_plugins: ["pkg.plugin"],
        },
        {
          type: "collected",
          seq: 3,
          items: [
            {
              nodeid: "test_calc.py::test_add",
              path: "/verifier/test_calc.py",
              kind: "function",
              name: "test_add",
            },
            {
              nodeid: "test_calc.py::TestSub::test_sub",
              path: "/verifier/test_calc.py",
              kind: "other",
              name: "test_sub",
            },
          ],
        },
        FINISH,
      ]),
    );
    expect(inventory).toEqual({
      kind: "pytest",
      collected: [
        { id: "verifier:test_calc.py::test_add", nodeid: "test_calc.py::test_add" },
        {
          id: "verifier:test_calc.py::TestSub::test_sub",
          nodeid: "test_calc.py::TestSub::test_sub",
        },
      ],
      defined: [
        {
          base: "verifier:test_pkg.py::test_name",
          nodeid: "test_pkg.py::test_name",
          min: 1,
          parametrised: false,
        },
        {
          base: "verifier:test_pkg.py::TestA::test_b",
          nodeid: "test_pkg.py::TestA::test_b",
          min: 2,
          parametrised: true,
        },
      ],
      modules: [
        {
          nodeid: "test_calc.py",
          location: "verifier:test_calc.py",
          file: "test_calc.py",
          collected: true,
          functions: ["test_add"],
        },
        {
          nodeid: "test_pkg.py",
          location: "verifier:test_pkg.py",
          file: "test_pkg.py",
          collected: false,
          functions: ["test_name"],
        },
      ],
      functionPatterns: ["test"],
      exitStatusPropagates: true,
      junitWritten: true,
      declaredPlugins: ["pkg.plugin"],
      versions: { python: "3.11.2", pytest: "7.2.1" },
    });
    // The command hid pytest's exit status and wrote no JUnit file.
    const masked = inventoryFromRun(
      run([START, { type: "collected", seq: 2, items: [] }, FINISH], {
        exitCode: 0,
        junit: undefined,
      }),
    );
    expect(masked.kind === "pytest" && [masked.exitStatusPropagates, masked.junitWritten]).toEqual([
      false,
      false,
    ]);
  });

  it("is opaque, with the reason, when the channel cannot serve the verifier", () => {
    const reasons = [
      inventoryFromRun(
        run([], {
          outcome: { connections: 0, records: [], violations: [] },
          output: "go: build failed",
        }),
      ),
      inventoryFromRun(
        run([START, FINISH], { outcome: { connections: 2, records: [START], violations: [] } }),
      ),
      inventoryFromRun(
        run([
          START,
          { type: "plugin-error", seq: 2, where: "_configure", error: "Traceback\nKeyError: 'x'" },
        ]),
      ),
      inventoryFromRun(run([START], { exitCode: 4, output: "ERROR: usage" })),
      inventoryFromRun(
        run([
          START,
          { type: "collect-error", seq: 2, nodeid: "tests", message: "ImportError in conftest" },
          { type: "collected", seq: 3, items: [] },
          FINISH,
        ]),
      ),
      inventoryFromRun(run([], { timedOut: true })),
    ].map((inventory) => (inventory.kind === "opaque" ? inventory.reason : "pytest"));
    expect(reasons[0]).toMatch(/did not load skillsmith's pytest plugin .* go: build failed/);
    expect(reasons[1]).toBe("the command starts pytest more than once");
    expect(reasons[2]).toMatch(/plugin failed in _configure/);
    expect(reasons[3]).toMatch(/did not finish collecting \(exit 4\): ERROR: usage/);
    expect(reasons[4]).toMatch(
      /collecting tests failed outside a test module: ImportError in conftest/,
    );
    expect(reasons[5]).toBe("collecting timed out");
  });

  it("keeps the JUnit check count of an opaque verifier as the lower bound of later runs", () => {
    const inventory = inventoryFromRun(
      run([], {
        outcome: { connections: 0, records: [], violations: [] },
        junit: [
          { name: "r::exists", status: "fail" },
          { name: "r::good", status: "fail" },
          { name: "r::exists", status: "fail" },
        ],
      }),
    );
    expect(inventory).toMatchObject({ kind: "opaque", junitChecks: 3 });
  });
});
