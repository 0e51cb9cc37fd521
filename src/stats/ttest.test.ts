import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { pairedTTest } from "./ttest.js";

describe("pairedTTest", () => {
  it("computes t by hand for [10, -5, 20, 15, 5, 0, 25]", () => {
    // Mean 70/7 = 10. Deviations 0, −15, 10, 5, −5, −10, 15; squares sum to
    // 0+225+100+25+25+100+225 = 700, s² = 700/6, s/√7 = √(100/6), t = 10/√(100/6) = √6.
    const result = pairedTTest([10, -5, 20, 15, 5, 0, 25]);
    expect(result.t).toBeCloseTo(Math.sqrt(6), 14);
    expect(result.df).toBe(6);
    // scipy.stats.ttest_1samp([10,-5,20,15,5,0,25], 0).pvalue
    expect(result.p).toBeCloseTo(0.04982526278057676, 13);
  });

  it("matches SciPy's ttest_1samp on several vectors", () => {
    const cases: [number[], number, number][] = [
      [[1.5, -0.3, 2.2, 0.8, 1.1, -1.4, 0.9, 2.5], 2.023433131482468, 0.08271032158533123],
      [
        [-8.333333333333334, -16.666666666666668, 0, -25, 8.333333333333334, -33.333333333333336],
        -1.9639610121239313,
        0.10674552235509228,
      ],
      [
        [100, -100, 50, 50, 25, 12.5, -6.25, 0, 0, 75, 43.75],
        1.4327809236805962,
        0.18243238863024228,
      ],
    ];
    for (const [deltas, t, p] of cases) {
      const result = pairedTTest(deltas);
      expect(Math.abs(result.t - t)).toBeLessThan(1e-12 * Math.abs(t));
      expect(Math.abs(result.p - p)).toBeLessThan(1e-12);
    }
  });

  it("for two deltas equals the Cauchy tail", () => {
    // n = 2, df = 1: d = [1, 3] → mean 2, s = √2, t = 2/(√2/√2) = 2; p = 1 − 2·atan(2)/π.
    const result = pairedTTest([1, 3]);
    expect(result.t).toBeCloseTo(2, 14);
    expect(result.p).toBeCloseTo(1 - (2 * Math.atan(2)) / Math.PI, 14);
  });

  it("follows the documented conventions where the formula divides by zero", () => {
    expect(pairedTTest([0, 0, 0])).toEqual({ t: 0, df: 2, p: 1 });
    expect(pairedTTest([7])).toEqual({ t: 0, df: 0, p: 1 });
    expect(pairedTTest([5, 5, 5])).toEqual({ t: Number.POSITIVE_INFINITY, df: 2, p: 0 });
    expect(pairedTTest([-2.5, -2.5])).toEqual({ t: Number.NEGATIVE_INFINITY, df: 1, p: 0 });
    // Equal on paper, unequal in the last bit: still treated as zero variance.
    const first = 100 * (0 / 7 - 1 / 7);
    const second = 100 * (4 / 7 - 5 / 7);
    expect(first).not.toBe(second);
    expect(pairedTTest([first, second, first]).p).toBe(0);
  });

  it("rejects bad input", () => {
    expect(() => pairedTTest([])).toThrow(InputError);
    expect(() => pairedTTest([1, Number.NaN])).toThrow(/NaN/);
  });
});
