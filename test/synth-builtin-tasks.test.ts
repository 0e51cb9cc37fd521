/**
 * The built-in task family is sound: every hidden test file passes on the shipped reference
 * solution and fails on a stub (checked by running the test functions in a real Python), the
 * split is fixed and disjoint, and scoring through the verifier runner with real pytest gives
 * 1.0 for a reference and 0 for a stub.
 */

import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runProcess } from "../src/core/process.js";
import { createSandbox, UnsafeSandbox } from "../src/env/index.js";
import {
  BuiltinTaskFamily,
  defaultBuiltinDirectory,
  defaultSplitSeed,
} from "../src/synth/index.js";
import { hasPytest } from "./support/tool-probes.js";

// Runs each task's test functions against a module installed as `solution`: one Python process
// for all tasks, so the check stays fast; pytest itself is exercised by the scoring test below.
const driver = `
import json, sys, types
results = {}
for task in json.load(sys.stdin):
    out = {}
    for label in ("reference", "stub"):
        module = types.ModuleType("solution")
        exec(compile(task[label], "solution.py", "exec"), module.__dict__)
        sys.modules["solution"] = module
        namespace = {"__name__": "test_hidden"}
        exec(compile(task["tests"], "test_hidden.py", "exec"), namespace)
        passed = failed = 0
        for name, function in list(namespace.items()):
            if name.startswith("test_") and callable(function):
                try:
                    function()
                    passed += 1
                except BaseException:
                    failed += 1
        out[label] = [passed, failed]
    results[task["id"]] = out
print(json.dumps(results))
`;

async function references(): Promise<Record<string, string>> {
  return parseYaml(
    await readFile(join(defaultBuiltinDirectory(), "references.yaml"), "utf8"),
  ) as Record<string, string>;
}

const family = new BuiltinTaskFamily({ sandbox: new UnsafeSandbox() });

function hasBubblewrap(): boolean {
  try {
    execFileSync("bwrap", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("built-in task family", () => {
  it("has at least 40 tasks, each with hidden tests that pass on the reference and fail on a stub", async () => {
    const tasks = await family.loadTasks();
    expect(tasks.length).toBeGreaterThanOrEqual(40);
    const solutions = await references();
    expect(Object.keys(solutions).sort()).toEqual(tasks.map((task) => task.id).sort());
    const input = tasks.map((task) => ({
      id: task.id,
      tests: task.hidden.tests,
      reference: solutions[task.id],
      stub: `${task.fields.signature}:\n    raise NotImplementedError\n`,
    }));
    const run = await runProcess("python3", ["-c", driver], {
      input: JSON.stringify(input),
      timeoutMs: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    const results = JSON.parse(run.stdout) as Record<
      string,
      { reference: [number, number]; stub: [number, number] }
    >;
    for (const task of tasks) {
      const result = results[task.id];
      // At least two test functions per task, all passing on the reference, none on the stub.
      expect(result?.reference[0], task.id).toBeGreaterThanOrEqual(2);
      expect(result?.reference[1], task.id).toBe(0);
      expect(result?.stub[0], task.id).toBe(0);
    }
  });

  it("splits train/test 1:1 with a fixed seed, disjoint and reproducible", async () => {
    const tasks = await family.loadTasks();
    const train = family.split(tasks, "train", defaultSplitSeed).map((task) => task.id);
    const test = family.split(tasks, "test", defaultSplitSeed).map((task) => task.id);
    expect(train.length).toBe(Math.ceil(tasks.length / 2));
    expect(train.length + test.length).toBe(tasks.length);
    expect(train.filter((id) => test.includes(id))).toEqual([]);
    expect(family.split(tasks, "train", defaultSplitSeed).map((task) => task.id)).toEqual(train);
    const other = family.split(tasks, "train", defaultSplitSeed + 1).map((task) => task.id);
    expect(other).not.toEqual(train);
  });

  it.skipIf(!hasPytest)(
    "scores with real pytest through the verifier runner: 1 for the reference, 0 for a stub (needs pytest)",
    async () => {
      const tasks = await family.loadTasks();
      const task = tasks.find((each) => each.id === "roman-to-int");
      expect(task).toBeDefined();
      if (task === undefined) return;
      const solutions = await references();
      const good = await family.score(task, solutions["roman-to-int"] ?? "");
      expect(good).toMatchObject({ score: 1, passed: 2, total: 2, flags: [] });
      const half = await family.score(
        task,
        // Right for numerals without subtractive pairs only: one of the two tests passes.
        'def roman_to_int(numeral):\n    v = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}\n    return sum(v[c] for c in numeral)\n',
      );
      expect(half).toMatchObject({ score: 0.5, passed: 1, total: 2 });
      const stub = await family.score(
        task,
        "def roman_to_int(numeral):\n    raise NotImplementedError\n",
      );
      expect(stub.score).toBe(0);
      expect(stub.checks.map((check) => check.status)).toEqual(["fail", "fail"]);
    },
  );

  it.skipIf(!hasBubblewrap() || !hasPytest)(
    "scores inside the bubblewrap sandbox, the CLI's default (needs bwrap and pytest)",
    async () => {
      const sandboxed = new BuiltinTaskFamily({ sandbox: await createSandbox({ kind: "local" }) });
      const task = (await sandboxed.loadTasks()).find((each) => each.id === "digit-sum");
      expect(task).toBeDefined();
      if (task === undefined) return;
      const solutions = await references();
      expect((await sandboxed.score(task, solutions["digit-sum"] ?? "")).score).toBe(1);
      // Right for non-negative numbers only ("-" is not a digit): one of the two tests passes.
      expect(
        (
          await sandboxed.score(
            task,
            "def digit_sum(number):\n    return sum(int(d) for d in str(number))\n",
          )
        ).score,
      ).toBe(0.5);
    },
  );
});
