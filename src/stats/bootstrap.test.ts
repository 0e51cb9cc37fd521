import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { bootstrapMeanCi, quantileOfSorted } from "./bootstrap.js";

describe("bootstrapMeanCi", () => {
  it("is deterministic under a seed and changes with the seed", () => {
    const deltas = [10, -5, 20, 15, 5, 0, 25, -10, 30];
    const first = bootstrapMeanCi(deltas, { seed: 42, resamples: 2000 });
    const again = bootstrapMeanCi(deltas, { seed: 42, resamples: 2000 });
    const other = bootstrapMeanCi(deltas, { seed: 43, resamples: 2000 });
    expect(again).toEqual(first);
    expect(other.lower === first.lower && other.upper === first.upper).toBe(false);
  });

  it("brackets the mean and stays inside the range of the data", () => {
    const deltas = [10, -5, 20, 15, 5, 0, 25, -10, 30];
    const mean = 90 / 9;
    const interval = bootstrapMeanCi(deltas);
    expect(interval.lower).toBeLessThan(mean);
    expect(interval.upper).toBeGreaterThan(mean);
    expect(interval.lower).toBeGreaterThanOrEqual(-10);
    expect(interval.upper).toBeLessThanOrEqual(30);
    expect(interval).toMatchObject({ level: 0.95, resamples: 10_000, seed: 1 });
  });

  it("is a single point for constant deltas", () => {
    expect(bootstrapMeanCi([7, 7, 7])).toMatchObject({ lower: 7, upper: 7 });
  });

  it("reaches the extremes for two deltas", () => {
    // Resample means of [0, 10] are 0 (p = 1/4), 5 (1/2) or 10 (1/4); with 10 000 draws the
    // 2.5% and 97.5% quantiles are 0 and 10 unless fewer than 250 draws hit an extreme, which
    // for this fixed seed they do not (P ≈ 10^-140 for any seed).
    expect(bootstrapMeanCi([0, 10], { seed: 9 })).toMatchObject({ lower: 0, upper: 10 });
  });

  it("rejects bad options", () => {
    expect(() => bootstrapMeanCi([1, 2], { level: 1 })).toThrow(InputError);
    expect(() => bootstrapMeanCi([1, 2], { resamples: 0 })).toThrow(/positive integer/);
    expect(() => bootstrapMeanCi([])).toThrow(/empty/);
  });
});

describe("quantileOfSorted", () => {
  it("interpolates linearly between order statistics", () => {
    // Positions q·(n − 1) in [1, 2, 3, 4]: q = 0.5 → 1.5 → 2.5; q = 0.25 → 0.75 → 1.75.
    expect(quantileOfSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileOfSorted([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantileOfSorted([1, 2, 3, 4], 0)).toBe(1);
    expect(quantileOfSorted([1, 2, 3, 4], 1)).toBe(4);
  });
});
