import { describe, expect, it } from "vitest";
import { relativeCost } from "./cost.js";
import {
  type AttemptScore,
  attemptScoreOf,
  type FamilyTask,
  renderVisible,
  ScoreMemo,
  seededSplit,
  visibleView,
} from "./family.js";

const family = {
  name: "demo",
  visibleFields: ["instruction", "signature"],
  hiddenFields: ["tests"],
};

describe("visibleView", () => {
  it("carries only declared visible fields, whatever else the task object holds", () => {
    const task = {
      id: "t1",
      fields: { instruction: "do it", signature: "def f()", tests: "assert SECRET", extra: "x" },
      hidden: { tests: "assert SECRET" },
      reference: "SECRET",
    } as FamilyTask;
    const view = visibleView(family, task);
    expect(view).toEqual({
      id: "t1",
      family: "demo",
      fields: { instruction: "do it", signature: "def f()" },
    });
    expect(JSON.stringify(view)).not.toContain("SECRET");
    expect(renderVisible(view)).toBe("instruction:\ndo it\n\nsignature:\ndef f()");
    expect(Object.isFrozen(view.fields)).toBe(true);
  });

  it("drops a field declared both visible and hidden", () => {
    const view = visibleView(
      { name: "demo", visibleFields: ["instruction", "tests"], hiddenFields: ["tests"] },
      { id: "t", fields: { instruction: "i", tests: "hidden" }, hidden: {} },
    );
    expect(Object.keys(view.fields)).toEqual(["instruction"]);
  });

  it("is the only way to get a VisibleTask: a plain object does not type-check", () => {
    // @ts-expect-error the brand cannot be forged outside family.ts
    const forged: import("./family.js").VisibleTask = { id: "t", family: "demo", fields: {} };
    expect(forged.id).toBe("t");
  });
});

describe("relative cost", () => {
  it("weighs output tokens twice against the zero-shot baseline", () => {
    const zeroShot = { solver: { inputTokens: 100, outputTokens: 50, calls: 2 } };
    const synth = {
      solver: { inputTokens: 300, outputTokens: 50, calls: 2 },
      synthesiser: { inputTokens: 400, outputTokens: 100, calls: 2 },
    };
    // (700 + 2·150) / (100 + 2·50) = 1000 / 200
    expect(relativeCost(synth, zeroShot)).toBe(5);
    expect(relativeCost(synth, {})).toBeUndefined();
  });
});

describe("seededSplit", () => {
  const task = (id: string): FamilyTask => ({ id, fields: {}, hidden: {} });
  const tasks = ["a/1", "a/2", "a/3", "b/1", "b/2", "b/3", "b/4"].map(task);
  const groupOf = (each: FamilyTask) => each.id.split("/")[0] ?? "";

  it("splits each group on its own: ⌈3/2⌉ = 2 and ⌈4/2⌉ = 2 to train, the rest to test", () => {
    const train = seededSplit(tasks, "train", 7, { groupOf }).map((each) => each.id);
    const test = seededSplit(tasks, "test", 7, { groupOf }).map((each) => each.id);
    expect(train.filter((id) => id.startsWith("a/"))).toHaveLength(2);
    expect(train.filter((id) => id.startsWith("b/"))).toHaveLength(2);
    expect([...train, ...test].sort()).toEqual(tasks.map((each) => each.id));
    // The same seed gives the same split whatever order the tasks come in.
    expect(
      seededSplit([...tasks].reverse(), "train", 7, { groupOf }).map((each) => each.id),
    ).toEqual(train);
  });

  it("without groups splits the whole list: ⌈7/2⌉ = 4 to train", () => {
    expect(seededSplit(tasks, "train", 7)).toHaveLength(4);
    expect(seededSplit(tasks, "test", 7)).toHaveLength(3);
  });
});

describe("ScoreMemo", () => {
  const verdict = (score: number): AttemptScore => ({
    score,
    passed: score,
    total: 1,
    flags: [],
    checks: [],
  });

  it("computes once per key, forgets a failed run, and starts over at its limit", async () => {
    const memo = new ScoreMemo(3);
    let calls = 0;
    const compute = (score: number) => () => {
      calls += 1;
      return Promise.resolve(verdict(score));
    };
    expect(await memo.score(["kind", "tests", "answer"], compute(1))).toEqual(verdict(1));
    expect(await memo.score(["kind", "tests", "answer"], compute(0))).toEqual(verdict(1));
    expect(calls).toBe(1);
    expect(await memo.score(["kind", "tests", "other answer"], compute(0))).toEqual(verdict(0));
    expect(calls).toBe(2);

    await expect(
      memo.score(["kind", "tests", "flaky"], () => Promise.reject(new Error("aborted"))),
    ).rejects.toThrow("aborted");
    // The failed run was dropped: two verdicts are remembered, below the limit of three.
    expect(await memo.score(["kind", "tests", "answer"], compute(0))).toEqual(verdict(1));
    expect(calls).toBe(2);

    // A third key fills the memo; a fourth finds it full and clears it, so the first is computed again.
    await memo.score(["kind", "tests", "third"], compute(0));
    expect(await memo.score(["kind", "tests", "answer"], compute(0))).toEqual(verdict(1));
    expect(calls).toBe(3);
    await memo.score(["kind", "tests", "fourth"], compute(0));
    expect(await memo.score(["kind", "tests", "answer"], compute(0))).toEqual(verdict(0));
    expect(calls).toBe(5);
  });
});

describe("attemptScoreOf", () => {
  it("keeps the verdict's numbers, flags and check statuses, and drops failure messages", () => {
    const flags = ["timeout"];
    // A verifier's checks carry messages, which can quote hidden tests.
    const checks = [
      { name: "test_a", status: "pass" },
      { name: "test_b", status: "fail", message: "assert SECRET == 1" },
    ];
    const score = attemptScoreOf({ passRatio: 0.5, passed: 1, total: 2, flags, checks });
    expect(score).toEqual({
      score: 0.5,
      passed: 1,
      total: 2,
      flags: ["timeout"],
      checks: [
        { name: "test_a", status: "pass" },
        { name: "test_b", status: "fail" },
      ],
    });
    expect(score.flags).not.toBe(flags);
    expect(JSON.stringify(score)).not.toContain("SECRET");
  });
});
