import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { classify } from "./classify.js";
import { summarizeDeltas } from "./summary.js";

describe("classify", () => {
  it("follows the protocol's rule", () => {
    expect(classify({ delta: 12, p: 0.01 })).toBe("golden");
    expect(classify({ delta: -12, p: 0.01 })).toBe("harmful");
    expect(classify({ delta: 12, p: 0.05 })).toBe("ineffective");
    expect(classify({ delta: -3, p: 0.2 })).toBe("ineffective");
    expect(classify({ delta: 0, p: 0.001 })).toBe("ineffective");
    expect(classify({ delta: 5, p: 0.08 }, 0.1)).toBe("golden");
  });

  it("rejects an alpha outside (0, 1)", () => {
    expect(() => classify({ delta: 1, p: 0.01 }, 0)).toThrow(InputError);
    expect(() => classify({ delta: 1, p: 0.01 }, 1.5)).toThrow(/alpha/);
  });
});

describe("summarizeDeltas", () => {
  it("puts the hand-computed values of the example together", () => {
    // See signflip.test.ts, ttest.test.ts and wilcoxon.test.ts for the hand computations.
    const summary = summarizeDeltas([10, -5, 20, 15, 5, 0, 25]);
    expect(summary).toMatchObject({
      n: 7,
      delta: 10,
      positive: 5,
      negative: 1,
      zero: 1,
      class: "ineffective",
      sensitivity: { ttest: "golden", wilcoxon: "ineffective" },
    });
    expect(summary.signflip.p).toBe(6 / 64);
    expect(summary.ttest.t).toBeCloseTo(Math.sqrt(6), 14);
    expect(summary.wilcoxon.p).toBe(6 / 64);
    expect(summary.ci.lower).toBeLessThan(10);
  });

  it("classifies ten consistent improvements as golden and their mirror as harmful", () => {
    // All ten positive: p = 2/2^10 < 0.05.
    const gains = [10, 20, 10, 30, 10, 20, 10, 40, 10, 20];
    expect(summarizeDeltas(gains).class).toBe("golden");
    expect(summarizeDeltas(gains.map((value) => -value)).class).toBe("harmful");
  });
});
