import { describe, expect, it } from "vitest";
import { canarySource, matchesFunctionPatterns, planCanaries } from "./canary.js";
import type { PytestInventory } from "./inventory.js";

const INVENTORY: PytestInventory = {
  kind: "pytest",
  collected: [
    {
      id: "verifier:tests/test_calc.py::test_add_small",
      nodeid: "tests/test_calc.py::test_add_small",
    },
  ],
  defined: [],
  modules: [
    {
      nodeid: "tests/test_calc.py",
      location: "verifier:tests/test_calc.py",
      file: "tests/test_calc.py",
      collected: true,
      functions: ["test_add_small", "test_add_large", "test_rounding_half"],
    },
    {
      nodeid: "tests/test_only_classes.py",
      location: "verifier:tests/test_only_classes.py",
      file: "tests/test_only_classes.py",
      collected: true,
      functions: [],
    },
  ],
  functionPatterns: ["test"],
  exitStatusPropagates: true,
  junitWritten: false,
  declaredPlugins: [],
  versions: { python: "3.11.2", pytest: "7.2.1" },
};

/** A fixed sequence of "random" integers, so the plan is known by hand. */
function sequence(values: number[]): (maximum: number) => number {
  let index = 0;
  return (maximum) => (values[index++ % values.length] ?? 0) % maximum;
}

describe("matchesFunctionPatterns", () => {
  it("follows pytest: a prefix, or an fnmatch glob", () => {
    expect(matchesFunctionPatterns("test_x", ["test"])).toBe(true);
    expect(matchesFunctionPatterns("check_x", ["test"])).toBe(false);
    expect(matchesFunctionPatterns("check_x", ["check_*"])).toBe(true);
    expect(matchesFunctionPatterns("x_should", ["*_should"])).toBe(true);
    expect(matchesFunctionPatterns("test1", ["test[0-9]"])).toBe(true);
    expect(matchesFunctionPatterns("testa", ["test[!a]"])).toBe(false);
  });
});

describe("planCanaries", () => {
  it("joins a module with module-level tests, named from its own words, one pass and one fail", () => {
    // Picks: module 0 (the only candidate), sample 0 ("test_add_small" → prefix "test_"); the
    // words {add, small, large, rounding, half} are ≥ 4, so the pool is theirs.
    const plan = planCanaries(
      INVENTORY,
      () => "def test_add_small(): pass\n",
      sequence([0, 0, 4, 1, 2, 3, 1]),
    );
    expect(plan?.file).toBe("tests/test_calc.py");
    expect(plan?.canaries.map((canary) => canary.expect).sort()).toEqual(["fail", "pass"]);
    for (const canary of plan?.canaries ?? []) {
      expect(canary.id).toBe(`verifier:tests/test_calc.py::${canary.name}`);
      expect(canary.name).toMatch(/^test_[a-z]+_[a-z]+$/);
    }
    expect(new Set(plan?.canaries.map((canary) => canary.name)).size).toBe(2);
  });

  it("never reuses a name already in the file, and gives up without module-level tests", () => {
    const taken = "def test_add_basic(): pass\ndef test_add_boundary(): pass\n";
    const plan = planCanaries(INVENTORY, () => taken);
    for (const canary of plan?.canaries ?? []) expect(taken).not.toContain(canary.name);
    const onlyClasses = INVENTORY.modules.filter((module) => module.functions.length === 0);
    expect(planCanaries({ ...INVENTORY, modules: onlyClasses }, () => "")).toBeUndefined();
  });

  it("names canaries for custom python_functions, or plans none when they cannot match", () => {
    const custom: PytestInventory = {
      ...INVENTORY,
      functionPatterns: ["check_*"],
      modules: [
        {
          nodeid: "t.py",
          location: "verifier:t.py",
          file: "t.py",
          collected: true,
          functions: ["check_add", "check_sub"],
        },
      ],
    };
    const plan = planCanaries(custom, () => "");
    for (const canary of plan?.canaries ?? []) expect(canary.name).toMatch(/^check_/);
    expect(planCanaries({ ...custom, functionPatterns: ["*_should"] }, () => "")).toBeUndefined();
  });
});

describe("canarySource", () => {
  it("writes ordinary test functions: the must-pass one's assert holds, the must-fail one's does not", () => {
    const plan = {
      file: "t.py",
      location: "verifier:t.py",
      canaries: [
        { id: "verifier:t.py::test_add_edge", name: "test_add_edge", expect: "pass" as const },
        { id: "verifier:t.py::test_half_order", name: "test_half_order", expect: "fail" as const },
      ],
    };
    // Values 2 + 10, 2 + 20, 2 + 30 = 66 for both; the failing one adds 1 + (5 % 3) = 3.
    const text = canarySource(plan, "x = 1", sequence([10, 20, 30, 10, 20, 30, 5]));
    expect(text).toBe(
      '\n\n\ndef test_add_edge():\n    """Add edge."""\n    values = [12, 22, 32]\n    assert sum(values) == 66\n' +
        '\n\ndef test_half_order():\n    """Half order."""\n    values = [12, 22, 32]\n    assert sum(values) == 69\n',
    );
  });
});
