import { describe, expect, it } from "vitest";
import { createProgressRenderer, formatProgress } from "./progress.js";

const progress = {
  total: 40,
  alreadyDone: 0,
  done: 10,
  running: 2,
  failed: 1,
  costUsd: 0.125,
  etaMs: 65_000,
};

describe("progress rendering", () => {
  it("says done, running, failed, cost and ETA", () => {
    expect(formatProgress(progress)).toBe("10/40 done, 2 running, 1 failed, $0.13, ETA 1m05s");
  });

  it("rewrites one line on a terminal and prints one line per finished run otherwise", () => {
    let terminal = "";
    const live = createProgressRenderer((text) => {
      terminal += text;
    }, true);
    live.update(progress);
    live.update({ ...progress, done: 11 });
    live.finish();
    expect(terminal.split("\n")).toHaveLength(2);
    expect(terminal).toContain("\r");

    const lines: string[] = [];
    const plain = createProgressRenderer((text) => lines.push(text), false);
    plain.update(progress);
    plain.update({
      ...progress,
      last: {
        config: "c",
        skill: "s",
        requirement: "r1",
        arm: "with",
        repeat: 1,
        status: "completed",
        passRatio: 0.5,
      },
    });
    plain.finish();
    expect(lines).toEqual([
      "c/s/r1/with#1: completed, 50% of checks passed (10/40 done, 2 running, 1 failed, $0.13, ETA 1m05s)\n",
    ]);
  });
});
