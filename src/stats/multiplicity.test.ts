import { describe, expect, it } from "vitest";
import { benjaminiHochberg, countBelow } from "./multiplicity.js";
import { createSeededRandom } from "./random.js";

/**
 * The step-up procedure as Benjamini & Hochberg (1995) state it, written independently of the
 * q-value implementation: with p sorted ascending, k* = max{k : p₍ₖ₎ ≤ k·α/m}; reject the k*
 * smallest. Returns the indices rejected.
 */
function stepUp(pValues: readonly number[], alpha: number): Set<number> {
  const m = pValues.length;
  const sorted = pValues.map((p, index) => [p, index] as const).sort((a, b) => a[0] - b[0]);
  let largest = 0;
  sorted.forEach(([p], position) => {
    if (p <= ((position + 1) * alpha) / m) largest = position + 1;
  });
  return new Set(sorted.slice(0, largest).map(([, index]) => index));
}

describe("Benjamini–Hochberg q-values", () => {
  it("match a hand computation", () => {
    // Sorted: 0.005 (#3), 0.01 (#0), 0.03 (#2), 0.04 (#1), 0.5 (#4); m·p/k = 0.025, 0.025,
    // 0.05, 0.05, 0.5; running minimum from the largest rank down gives the q below.
    const hand = benjaminiHochberg([0.01, 0.04, 0.03, 0.005, 0.5]);
    [0.025, 0.05, 0.05, 0.025, 0.5].forEach((expected, index) => {
      expect(hand[index]).toBeCloseTo(expected, 12);
    });
    // The same numbers from a Python one-off (no scipy), pasted:
    //   p=[0.2,0.001,0.04,0.04,0.9,0.012]; m=len(p); o=sorted(range(m),key=lambda i:p[i])
    //   q=[0]*m; r=1
    //   for k in range(m,0,-1): i=o[k-1]; r=min(r,m*p[i]/k); q[i]=min(1,r)
    //   -> [0.24, 0.006, 0.06, 0.06, 0.9, 0.036]
    const q = benjaminiHochberg([0.2, 0.001, 0.04, 0.04, 0.9, 0.012]);
    [0.24, 0.006, 0.06, 0.06, 0.9, 0.036].forEach((expected, index) => {
      expect(q[index]).toBeCloseTo(expected, 12);
    });
  });

  it("reject exactly what the step-up procedure rejects, on random p-values", () => {
    const random = createSeededRandom(7);
    for (let trial = 0; trial < 300; trial++) {
      const m = 1 + random.nextBelow(40);
      // A mix of near-zero and uniform p-values, like a run with a few real effects.
      const p = Array.from({ length: m }, () =>
        random.nextBelow(4) === 0 ? random.nextFloat() * 0.01 : random.nextFloat(),
      );
      const alpha = [0.01, 0.05, 0.1][trial % 3] as number;
      const q = benjaminiHochberg(p);
      const rejected = new Set(q.flatMap((value, index) => (value <= alpha ? [index] : [])));
      expect(rejected).toEqual(stepUp(p, alpha));
      q.forEach((value, index) => {
        expect(value).toBeGreaterThanOrEqual(p[index] as number);
        expect(value).toBeLessThanOrEqual(1);
      });
    }
  });

  it("keep the order of equal p-values and accept none, one or invalid input correctly", () => {
    expect(benjaminiHochberg([])).toEqual([]);
    expect(benjaminiHochberg([0.03])).toEqual([0.03]);
    expect(benjaminiHochberg([0.02, 0.02, 0.02])).toEqual([0.02, 0.02, 0.02]);
    expect(() => benjaminiHochberg([0.1, Number.NaN])).toThrow(/item 1/);
    expect(() => benjaminiHochberg([1.5])).toThrow(/p-value in \[0, 1\]/);
    expect(countBelow([0.01, 0.05, 0.049], 0.05)).toBe(2);
  });
});
