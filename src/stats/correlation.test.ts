import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { pearson, spearman } from "./correlation.js";

describe("pearson", () => {
  it("computes a hand-worked example", () => {
    // x = 1..5 (mean 3), y = 2,4,5,4,5 (mean 4). Deviations −2,−1,0,1,2 and −2,0,1,0,1:
    // Σdx·dy = 4 + 0 + 0 + 0 + 2 = 6, Σdx² = 10, Σdy² = 6 → r = 6/√60 = √0.6.
    expect(pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])).toBeCloseTo(Math.sqrt(0.6), 15);
  });

  it("is ±1 for exact linear relations", () => {
    expect(pearson([1, 2, 3], [10, 20, 30])).toBe(1);
    expect(pearson([1, 2, 3], [3, 1, -1])).toBe(-1);
  });

  it("is NaN (undefined) when a sample is constant", () => {
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(pearson([4], [2])).toBeNaN();
  });

  it("rejects mismatched lengths and bad values", () => {
    expect(() => pearson([1, 2], [1, 2, 3])).toThrow(InputError);
    expect(() => pearson([1, 2], [1, 2, 3])).toThrow(/x has 2 values but y has 3/);
    expect(() => pearson([], [])).toThrow(/empty/);
    expect(() => pearson([1, Number.NaN], [1, 2])).toThrow(/NaN/);
  });
});

describe("spearman", () => {
  it("uses mid-ranks for ties (hand-worked)", () => {
    // x = 1,2,2,3,10 → ranks 1, 2.5, 2.5, 4, 5; y = 5,6,6,7,1 → ranks 2, 3.5, 3.5, 5, 1.
    // Deviations from 3: −2,−.5,−.5,1,2 and −1,.5,.5,2,−2: Σ = 2 − .25 − .25 + 2 − 4 = −0.5,
    // Σdx² = Σdy² = 9.5 → ρ = −0.5/9.5 = −1/19.
    expect(spearman([1, 2, 2, 3, 10], [5, 6, 6, 7, 1])).toBeCloseTo(-1 / 19, 15);
  });

  it("is 1 for any monotone increasing relation", () => {
    expect(spearman([1, 2, 3, 4], [1, 8, 27, 1000])).toBe(1);
  });

  it("rejects mismatched lengths", () => {
    expect(() => spearman([1], [1, 2])).toThrow(InputError);
  });
});
