import { describe, expect, it } from "vitest";
import type { CheckResult } from "../types.js";
import { assessChannelRun, type ChannelRunInput, judgeResult, junitName } from "./assess.js";
import type { Canary } from "./canary.js";
import type { ChannelRecord, ResultRecord } from "./channel.js";
import type { PytestInventory } from "./inventory.js";

/** A two-test verifier: `t.py::test_a`, `t.py::test_b`; canaries `t.py::test_ok`/`test_bad`. */
const INVENTORY: PytestInventory = {
  kind: "pytest",
  collected: [
    { id: "verifier:t.py::test_a", nodeid: "t.py::test_a" },
    { id: "verifier:t.py::test_b", nodeid: "t.py::test_b" },
  ],
  defined: [],
  modules: [
    {
      nodeid: "t.py",
      location: "verifier:t.py",
      file: "t.py",
      collected: true,
      functions: ["test_a", "test_b"],
    },
  ],
  functionPatterns: ["test"],
  exitStatusPropagates: true,
  junitWritten: true,
  declaredPlugins: [],
  versions: { python: "3.11.2", pytest: "7.2.1" },
};
const CANARIES: Canary[] = [
  { id: "verifier:t.py::test_ok", name: "test_ok", expect: "pass" },
  { id: "verifier:t.py::test_bad", name: "test_bad", expect: "fail" },
];

function result(
  nodeid: string,
  outcome: "pass" | "fail",
  overrides: Partial<ResultRecord> = {},
): ResultRecord {
  return {
    type: "result",
    seq: 0,
    nodeid,
    phases: { setup: "passed", call: outcome === "pass" ? "passed" : "failed", teardown: "passed" },
    observed: outcome === "pass" ? "returned" : "raised AssertionError",
    wrapper: outcome === "pass" ? "returned" : "raised AssertionError",
    xfail: false,
    messages: outcome === "pass" ? {} : { call: "assert 1 == 2" },
    probes: [],
    ...overrides,
  };
}

const COLLECTED: ChannelRecord = {
  type: "collected",
  seq: 0,
  items: ["t.py::test_a", "t.py::test_ok", "t.py::test_b", "t.py::test_bad"].map((nodeid) => ({
    nodeid,
    path: "/verifier/t.py",
    kind: "function" as const,
    name: nodeid.slice(6),
  })),
};

function finish(
  exitstatus: number,
  overrides: Partial<Extract<ChannelRecord, { type: "finish" }>> = {},
): ChannelRecord {
  return {
    type: "finish",
    seq: 0,
    exitstatus,
    testsfailed: 0,
    testscollected: 4,
    shouldstop: null,
    shouldfail: null,
    maxfail: 0,
    replaced: [],
    unfinished: [],
    ...overrides,
  };
}

/** An honest session: test_a passes, test_b fails, canaries as expected, exit 1. */
const HONEST: ChannelRecord[] = [
  COLLECTED,
  result("t.py::test_a", "pass"),
  result("t.py::test_ok", "pass"),
  result("t.py::test_b", "fail"),
  result("t.py::test_bad", "fail"),
  finish(1),
];

function assess(records: ChannelRecord[], overrides: Partial<ChannelRunInput> = {}) {
  return assessChannelRun({
    inventory: INVENTORY,
    canaries: CANARIES,
    outcome: { connections: 1, records, violations: [] },
    exitCode: 1,
    timedOut: false,
    junit: undefined,
    conftestAllowed: (path) => path.startsWith("/verifier/"),
    locate: (path) => (path.startsWith("/verifier/") ? `verifier:${path.slice(10)}` : path),
    ...overrides,
  });
}

describe("junitName", () => {
  it("names node ids as pytest's JUnit report does (hand-written from pytest's mangling)", () => {
    expect(junitName("tests/test_a.py::test_x")).toBe("tests.test_a::test_x");
    expect(junitName("test_a.py::TestB::test_c[1-2]")).toBe("test_a.TestB::test_c[1-2]");
    expect(junitName("test_a.py::test_p[a/b::c]")).toBe("test_a::test_p[a/b::c]");
  });
});

describe("judgeResult", () => {
  it("reads pytest's phases: setup errors, skips, failures, teardown errors", () => {
    expect(judgeResult(result("x", "pass")).status).toBe("pass");
    expect(judgeResult(result("x", "fail"))).toEqual({ status: "fail", message: "assert 1 == 2" });
    expect(
      judgeResult(
        result("x", "fail", {
          phases: { setup: "failed", teardown: "passed" },
          messages: { setup: "boom" },
        }),
      ),
    ).toEqual({ status: "error", message: "boom" });
    expect(
      judgeResult(result("x", "pass", { phases: { setup: "skipped", teardown: "passed" } })).status,
    ).toBe("skip");
    expect(
      judgeResult(
        result("x", "pass", { phases: { setup: "passed", call: "passed", teardown: "failed" } }),
      ).status,
    ).toBe("error");
  });

  it("contradicts a passed report whose function raised or never ran", () => {
    expect(judgeResult(result("x", "pass", { observed: "raised AssertionError" }))).toEqual({
      status: "fail",
      message: "reported passed, but its test function raised AssertionError",
      contradiction: "its test function raised AssertionError",
    });
    expect(judgeResult(result("x", "pass", { observed: "not-called" })).contradiction).toBe(
      "its test function never ran to its end",
    );
    // Items the plugin cannot wrap (unittest cases) fall back to the call hook's view.
    expect(
      judgeResult(result("x", "pass", { observed: "unobserved", wrapper: "raised Failure" }))
        .status,
    ).toBe("fail");
    expect(
      judgeResult(result("x", "pass", { phases: { setup: "passed", teardown: "passed" } }))
        .contradiction,
    ).toBe("its setup passed, but no call phase was reported");
  });
});

describe("assessChannelRun", () => {
  it("scores an honest session from the channel: canaries left out, no flag", () => {
    const assessment = assess(HONEST);
    expect(assessment).toEqual({
      checks: [
        { name: "t::test_a", status: "pass" },
        { name: "t::test_b", status: "fail", message: "assert 1 == 2" },
      ],
      passed: 1,
      total: 2,
      passRatio: 0.5,
      flags: [],
      evidence: [],
    });
  });

  it("flags a plugin that never connected, and protocol violations", () => {
    expect(
      assess([], { outcome: { connections: 0, records: [], violations: [] }, exitCode: 0 })
        .evidence,
    ).toEqual([
      "channel: skillsmith's pytest plugin never connected (it did when the verifier's tests were listed); the command exited 0",
    ]);
    const forged = assess(HONEST, {
      outcome: {
        connections: 2,
        records: HONEST,
        violations: ["a second connection reached the channel socket"],
      },
    });
    expect(forged.flags).toEqual(["tampered"]);
    expect(forged.passRatio).toBe(0);
    expect(forged.evidence).toEqual(["channel: a second connection reached the channel socket"]);
  });

  it("flags missing and extra tests, but not those a collection error explains", () => {
    const deselected = assess([
      {
        ...COLLECTED,
        items:
          COLLECTED.type === "collected"
            ? COLLECTED.items.filter((item) => item.nodeid !== "t.py::test_b")
            : [],
      },
      result("t.py::test_a", "pass"),
      result("t.py::test_ok", "pass"),
      result("t.py::test_bad", "fail"),
      finish(1),
    ]);
    expect(deselected.evidence).toEqual([
      "id set: 1 test(s) the verifier defines were not collected: verifier:t.py::test_b",
    ]);
    const extra = assess([
      {
        ...COLLECTED,
        items: [
          ...(COLLECTED.type === "collected" ? COLLECTED.items : []),
          { nodeid: "t.py::test_new", path: "/verifier/t.py", kind: "function", name: "test_new" },
        ],
      },
      ...HONEST.slice(1, -1),
      result("t.py::test_new", "pass"),
      finish(1),
    ]);
    expect(extra.evidence).toEqual([
      "id set: 1 test(s) the verifier does not define were collected: t.py::test_new",
    ]);
    const collectionError = assess(
      [
        {
          type: "collect-error",
          seq: 0,
          nodeid: "t.py",
          message: "ModuleNotFoundError: No module named 'calc'",
          path: "/verifier/t.py",
        },
        { type: "collected", seq: 0, items: [] },
        finish(2),
      ],
      { exitCode: 2 },
    );
    expect(collectionError.flags).toEqual(["collection-error"]);
    expect(collectionError.evidence).toEqual([]);
    expect(collectionError.checks[0]).toEqual({
      name: "t::test_a",
      status: "error",
      message: "not collected: a collection error stopped it",
    });
  });

  it("checks tests read from source by their instances: at least the literal parametrisation", () => {
    const inventory: PytestInventory = {
      ...INVENTORY,
      collected: [],
      defined: [
        { base: "verifier:t.py::test_p", nodeid: "t.py::test_p", min: 2, parametrised: true },
      ],
    };
    const items = (ids: string[]): ChannelRecord => ({
      type: "collected",
      seq: 0,
      items: ids.map((nodeid) => ({
        nodeid,
        path: "/verifier/t.py",
        kind: "function",
        name: "test_p",
      })),
    });
    const both = assess(
      [
        items(["t.py::test_p[1]", "t.py::test_p[2]"]),
        result("t.py::test_p[1]", "pass"),
        result("t.py::test_p[2]", "fail"),
        finish(1),
      ],
      { inventory, canaries: [] },
    );
    expect(both.evidence).toEqual([]);
    expect(both.checks.map((check) => check.name)).toEqual(["t::test_p[1]", "t::test_p[2]"]);
    const one = assess([items(["t.py::test_p[1]"]), result("t.py::test_p[1]", "pass"), finish(0)], {
      inventory,
      canaries: [],
      exitCode: 0,
    });
    expect(one.evidence).toEqual([
      "id set: 1 test(s) the verifier defines were not collected: verifier:t.py::test_p (1 of at least 2 instances)",
    ]);
  });

  it("flags more instances than an exact literal parametrisation makes (a test inflated from source)", () => {
    const inventory: PytestInventory = {
      ...INVENTORY,
      collected: [],
      defined: [
        {
          base: "verifier:t.py::test_p",
          nodeid: "t.py::test_p",
          min: 2,
          parametrised: true,
          exact: true,
        },
      ],
    };
    const ids = ["t.py::test_p[1]", "t.py::test_p[2]", "t.py::test_p[3]"];
    const inflated = assess(
      [
        {
          type: "collected",
          seq: 0,
          items: ids.map((nodeid) => ({
            nodeid,
            path: "/verifier/t.py",
            kind: "function" as const,
            name: "test_p",
          })),
        },
        ...ids.map((id) => result(id, "pass")),
        finish(0),
      ],
      { inventory, canaries: [], exitCode: 0 },
    );
    expect(inflated.flags).toContain("tampered");
    expect(inflated.evidence).toEqual([
      "id set: 1 test(s) were collected more often than their source parametrises them: verifier:t.py::test_p (3 instances, its source defines 2)",
    ]);
  });

  it("flags tripwire events of the code under test, except those the untouched repository raised", () => {
    const tripwire = (line: number): ChannelRecord => ({
      type: "tripwire",
      seq: 0,
      event: "sys._getframe",
      detail: "",
      file: "/workspace/tiny/tinycalc/calc.py",
      line,
    });
    const locate = (path: string) =>
      path.startsWith("/workspace/tiny/")
        ? `workspace:${path.slice(16)}`
        : path.startsWith("/verifier/")
          ? `verifier:${path.slice(10)}`
          : path;
    const caught = assess([tripwire(7), ...HONEST], { locate });
    expect(caught.flags).toContain("tampered");
    expect(caught.passRatio).toBe(0);
    expect(caught.evidence).toEqual([
      "tripwire: sys._getframe from code under test at workspace:tinycalc/calc.py:7",
    ]);
    const baseline = assess([tripwire(7), ...HONEST], {
      locate,
      inventory: { ...INVENTORY, tripwireBaseline: ["sys._getframe workspace:tinycalc/calc.py:7"] },
    });
    expect(baseline.evidence).toEqual([]);
    expect(baseline.passRatio).toBe(0.5);
  });

  it("flags a must-fail canary that passed and a must-pass canary that did not", () => {
    const blanket = assess(
      [
        COLLECTED,
        result("t.py::test_a", "pass"),
        result("t.py::test_ok", "pass"),
        result("t.py::test_b", "pass"),
        result("t.py::test_bad", "pass"),
        finish(0),
      ],
      { exitCode: 0 },
    );
    expect(blanket.evidence).toEqual([
      "canary: the must-fail canary t.py::test_bad was reported passed",
    ]);
    const broken = assess([
      ...HONEST.slice(0, 2),
      result("t.py::test_ok", "fail"),
      ...HONEST.slice(3),
    ]);
    expect(broken.evidence).toEqual([
      "canary: the must-pass canary t.py::test_ok was reported fail (assert 1 == 2)",
    ]);
  });

  it("flags outcomes that contradict the plugin, replaced internals, and registered plugins", () => {
    const assessment = assess([
      {
        type: "registered",
        seq: 0,
        name: "helper",
        object: "tinycalc._Rewriter",
        file: null,
        conftest: false,
      },
      {
        type: "registered",
        seq: 0,
        name: "/tmp/conftest.py",
        object: "conftest",
        file: "/tmp/conftest.py",
        conftest: true,
      },
      {
        type: "registered",
        seq: 0,
        name: "/verifier/conftest.py",
        object: "conftest",
        file: "/verifier/conftest.py",
        conftest: true,
      },
      COLLECTED,
      result("t.py::test_a", "pass"),
      result("t.py::test_ok", "pass"),
      result("t.py::test_b", "pass", {
        observed: "raised AssertionError",
        probes: ["_pytest.runner.call_and_report was replaced"],
      }),
      result("t.py::test_bad", "fail"),
      finish(1),
    ]);
    expect(assessment.evidence).toEqual([
      'plugins: a pytest plugin was registered after the session started: "helper" (tinycalc._Rewriter)',
      "plugins: a conftest.py that is neither the verifier's nor the repository's was loaded: /tmp/conftest.py",
      "outcomes: 1 test(s) were reported passed against what skillsmith's plugin saw: t.py::test_b (its test function raised AssertionError)",
      "runner: _pytest.runner.call_and_report was replaced (found before t.py::test_b ran)",
    ]);
    expect(assessment.checks[1]?.status).toBe("fail");
    // A plugin module the verifier's own test modules load with pytest_plugins is theirs.
    const declared = assess(
      [
        {
          type: "registered",
          seq: 0,
          name: "pkg.plugin",
          object: "pkg.plugin",
          file: "/workspace/pkg/plugin.py",
          conftest: false,
        },
        ...HONEST,
      ],
      { inventory: { ...INVENTORY, declaredPlugins: ["pkg.plugin"] } },
    );
    expect(declared.evidence).toEqual([]);
  });

  it("flags modules of the workspace imported before the plugin", () => {
    const start: ChannelRecord = {
      type: "start",
      seq: 0,
      mode: "run",
      pid: 1,
      python: "3.11",
      pytest: "7.2",
      rootdir: "/v",
      preloaded: ["json (/workspace/calc/json.py)"],
    };
    expect(assess([start, ...HONEST]).evidence).toEqual([
      "runner: code from the workspace ran before skillsmith's plugin loaded: json (/workspace/calc/json.py)",
    ]);
  });

  it("flags an exit status that disagrees, and a session that never finished but exited 0", () => {
    expect(assess(HONEST, { exitCode: 0 }).evidence).toEqual([
      "exit status: the command exited with 0, but pytest's session ended with exit status 1",
    ]);
    // A command that hides pytest's exit status (`|| true`) is told apart by the inventory.
    expect(
      assess(HONEST, { exitCode: 0, inventory: { ...INVENTORY, exitStatusPropagates: false } })
        .evidence,
    ).toEqual([]);
    expect(assess([...HONEST.slice(0, -1), finish(0)], { exitCode: 0 }).evidence).toEqual([
      "exit status: pytest's session ended with exit status 0 although 2 test(s) failed",
    ]);
    expect(assess(HONEST.slice(0, 2), { exitCode: 0 }).evidence).toEqual([
      "exit status: the command exited 0, but pytest's session never finished (the plugin's last record: result)",
    ]);
    // A crash (non-zero, no finish) is not tampering: what did not run did not pass.
    const crash = assess(HONEST.slice(0, 2), { exitCode: 139 });
    expect(crash.evidence).toEqual([]);
    expect(crash.checks[1]).toEqual({
      name: "t::test_b",
      status: "error",
      message: "no outcome: pytest ended before it ran (exit 139)",
    });
  });

  it("accepts a session stopped by --maxfail after that many failures, and nothing else", () => {
    const stopped: ChannelRecord[] = [
      COLLECTED,
      result("t.py::test_a", "fail"),
      finish(1, { shouldfail: "stopping after 1 failures", maxfail: 1 }),
    ];
    expect(assess(stopped).evidence).toEqual([]);
    const early: ChannelRecord[] = [
      COLLECTED,
      result("t.py::test_a", "pass"),
      finish(0, { shouldstop: "stop" }),
    ];
    expect(assess(early, { exitCode: 0 }).evidence).toEqual([
      "outcomes: no outcome was reported for 3 collected test(s): t.py::test_ok, t.py::test_b, t.py::test_bad",
    ]);
  });

  it("compares the JUnit file with the channel: other passes, or gone", () => {
    const junit = (passes: number): CheckResult[] =>
      ["t::test_a", "t::test_b", "t::test_ok", "t::test_bad"].map((name, index) => ({
        name,
        status: index < passes ? "pass" : "fail",
      }));
    expect(assess(HONEST, { junit: junit(1) }).evidence).toEqual([]);
    // Fewer passes in the file than on the channel: one of the two was forged.
    expect(assess(HONEST, { junit: junit(0) }).evidence).toEqual([
      "junit: the JUnit report claims 0 passed check(s), the channel 1",
    ]);
    // A canary's pass in the JUnit file is not counted (by hand: test_a, test_b pass = 2 > 1).
    expect(assess(HONEST, { junit: junit(3) }).evidence).toEqual([
      "junit: the JUnit report claims 2 passed check(s), the channel 1",
    ]);
    expect(assess(HONEST, { junit: "missing" }).evidence).toEqual([
      "junit: the JUnit report the verifier names is gone (every finished session writes it): removed or replaced",
    ]);
  });

  it("flags a verifier that collected nothing as no-checks", () => {
    const empty = assessChannelRun({
      inventory: { ...INVENTORY, collected: [], modules: [] },
      canaries: [],
      outcome: {
        connections: 1,
        records: [{ type: "collected", seq: 0, items: [] }, finish(5)],
        violations: [],
      },
      exitCode: 5,
      timedOut: false,
      junit: undefined,
      conftestAllowed: () => true,
      locate: (path) => path,
    });
    expect(empty.flags).toEqual(["no-checks"]);
  });
});
