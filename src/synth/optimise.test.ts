import { describe, expect, it } from "vitest";
import { createSeededRandom } from "../stats/index.js";
import { caseQuotas, sampleCases, type Transition, type TransitionKind } from "./optimise.js";
import type { TaskRunRecord } from "./run.js";

const record = (taskId: string, score: number): TaskRunRecord => ({
  method: "synth",
  taskId,
  score,
  passed: score,
  total: 1,
  flags: [],
  checks: [],
  solverOutput: "",
  fallback: false,
  usage: {},
});

/** `count` transitions of `kind`, ids `<kind>-<n>`. */
function transitionsOf(kind: TransitionKind, count: number): Transition[] {
  const scores: Record<TransitionKind, [number, number]> = {
    regression: [1, 0],
    improvement: [0, 1],
    "persistent-success": [1, 1],
    "persistent-failure": [0, 0],
  };
  const [before, after] = scores[kind];
  return Array.from({ length: count }, (_, index) => ({
    taskId: `${kind}-${index}`,
    kind,
    previous: record(`${kind}-${index}`, before),
    current: record(`${kind}-${index}`, after),
  }));
}

const available = (
  regression: number,
  improvement: number,
  success: number,
  failure: number,
): Record<TransitionKind, number> => ({
  regression,
  improvement,
  "persistent-success": success,
  "persistent-failure": failure,
});

describe("caseQuotas (3:2:1:1, shortfall redistributed)", () => {
  it("draws 3:2:1:1 when every kind has enough cases, and scales with the unit", () => {
    expect(caseQuotas(available(10, 10, 10, 10))).toEqual(available(3, 2, 1, 1));
    expect(caseQuotas(available(10, 10, 10, 10), 2)).toEqual(available(6, 4, 2, 2));
  });

  it("gives an empty kind's share to the others by ratio / (drawn + 1), ties in kind order", () => {
    // No regressions: the 3 missing go, one at a time, to the highest ratio/(drawn+1):
    // improvement 2/3 > 1/2 → improvement (3); then improvement 2/4, successes 1/2, failures
    // 1/2 tie → improvement first (4); then 2/5 < 1/2 → successes (2). 4 + 2 + 1 = 7.
    expect(caseQuotas(available(0, 10, 10, 10))).toEqual(available(0, 4, 2, 1));
    // Only persistent failures (the whole training sample failed twice): all 7 from there.
    expect(caseQuotas(available(0, 0, 0, 10))).toEqual(available(0, 0, 0, 7));
    // One regression and nothing else but successes: 1 + 6 = 7.
    expect(caseQuotas(available(1, 0, 9, 0))).toEqual(available(1, 0, 6, 0));
  });

  it("draws everything when fewer than 7 cases exist", () => {
    expect(caseQuotas(available(1, 1, 0, 2))).toEqual(available(1, 1, 0, 2));
    expect(caseQuotas(available(0, 0, 0, 0))).toEqual(available(0, 0, 0, 0));
  });
});

describe("sampleCases", () => {
  const transitions = [
    ...transitionsOf("improvement", 5),
    ...transitionsOf("persistent-success", 5),
    ...transitionsOf("persistent-failure", 5),
  ];

  it("draws the requested 7 when a kind is empty, per the quotas, and deterministically", () => {
    const chosen = sampleCases(transitions, createSeededRandom(11));
    expect(chosen).toHaveLength(7);
    const perKind = (kind: TransitionKind) => chosen.filter((each) => each.kind === kind).length;
    // The quotas of available(0, 5, 5, 5), by the hand computation above.
    expect([
      perKind("regression"),
      perKind("improvement"),
      perKind("persistent-success"),
      perKind("persistent-failure"),
    ]).toEqual([0, 4, 2, 1]);
    expect(new Set(chosen.map((each) => each.taskId)).size).toBe(7);
    // Same seed, same cases; another seed picks other cases of the same kinds.
    const again = sampleCases(transitions, createSeededRandom(11));
    expect(again.map((each) => each.taskId)).toEqual(chosen.map((each) => each.taskId));
    const other = sampleCases(transitions, createSeededRandom(12));
    expect(other.map((each) => each.kind)).toEqual(chosen.map((each) => each.kind));
  });

  it("draws every case when there are fewer than 7", () => {
    const few = [...transitionsOf("regression", 1), ...transitionsOf("persistent-failure", 2)];
    expect(
      sampleCases(few, createSeededRandom(1))
        .map((each) => each.taskId)
        .sort(),
    ).toEqual(["persistent-failure-0", "persistent-failure-1", "regression-0"]);
  });
});
