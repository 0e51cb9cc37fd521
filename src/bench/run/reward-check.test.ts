import { describe, expect, it } from "vitest";
import type { ChannelOutcome, ChannelRecord } from "../../env/index.js";
import { rewardAgreement, rewardCeiling, rewardDisagreement } from "./reward-check.js";

function result(
  nodeid: string,
  setup: "passed" | "skipped",
  call?: "passed" | "failed" | "skipped",
): ChannelRecord {
  return {
    type: "result",
    seq: 0,
    nodeid,
    phases: { setup, ...(call === undefined ? {} : { call }) },
    observed: "returned",
    wrapper: null,
    xfail: false,
    messages: {},
    probes: [],
  };
}

const FINISH: ChannelRecord = {
  type: "finish",
  seq: 0,
  exitstatus: 0,
  testsfailed: 0,
  testscollected: 4,
  shouldstop: null,
  shouldfail: null,
  maxfail: 0,
  replaced: [],
  unfinished: [],
};

function outcome(records: ChannelRecord[]): ChannelOutcome {
  return { connections: 1, records, violations: [] };
}

const REWARD_ONE = { value: 1, file: "reward.txt" };

describe("rewardCeiling and rewardDisagreement", () => {
  it("allows reward 1 when every test passed", () => {
    const ceiling = rewardCeiling(outcome([FINISH]), { passed: 4, total: 4 });
    expect(ceiling).toEqual({ passed: 4, counted: 4, finished: true, ceiling: 1 });
    expect(rewardDisagreement(REWARD_ONE, ceiling)).toBeUndefined();
    expect(rewardAgreement(ceiling)).toBe(
      "reward cross-checked with skillsmith's channel: 4 of 4 test(s) passed",
    );
  });

  it("leaves tests skipped before their body out (a skipif mark), so reward 1 stands", () => {
    const records = [result("a", "skipped"), FINISH];
    const ceiling = rewardCeiling(outcome(records), { passed: 3, total: 4 });
    expect([ceiling.counted, ceiling.ceiling]).toEqual([3, 1]);
    expect(rewardDisagreement(REWARD_ONE, ceiling)).toBeUndefined();
  });

  it("counts a skip raised in a test's body as not passed: reward 1 over 1 of 4 is evidence", () => {
    const records = [result("a", "passed", "skipped"), FINISH];
    const ceiling = rewardCeiling(outcome(records), { passed: 1, total: 4 });
    expect(rewardDisagreement(REWARD_ONE, ceiling)).toBe(
      "reward: test.sh wrote 1 to reward.txt, but skillsmith's channel saw 1 of 4 test(s) pass (at most 0.25)",
    );
  });

  it("names a session that never finished", () => {
    const ceiling = rewardCeiling(outcome([]), { passed: 0, total: 4 });
    expect(ceiling.ceiling).toBe(0);
    expect(rewardDisagreement(REWARD_ONE, ceiling)).toMatch(/0 of 4 .*never finished$/);
  });

  it("accepts a partial reward up to the pass ratio, with rounding slack, and nothing above", () => {
    const ceiling = rewardCeiling(outcome([FINISH]), { passed: 1, total: 3 });
    expect(rewardDisagreement({ value: 0.3333, file: "reward.json" }, ceiling)).toBeUndefined();
    expect(rewardDisagreement({ value: 0, file: "reward.json" }, ceiling)).toBeUndefined();
    expect(rewardDisagreement({ value: 0.5, file: "reward.json" }, ceiling)).toMatch(
      /^reward: test.sh wrote 0.5 to reward.json, .* 1 of 3 .*at most 0.333\)$/,
    );
  });

  it("allows any reward when a finished session had nothing left to run, none when unfinished", () => {
    const skipped = [result("a", "skipped")];
    expect(rewardCeiling(outcome([...skipped, FINISH]), { passed: 0, total: 1 }).ceiling).toBe(1);
    expect(rewardCeiling(outcome(skipped), { passed: 0, total: 1 }).ceiling).toBe(0);
  });
});
