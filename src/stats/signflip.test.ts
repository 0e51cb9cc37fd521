import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { findGrid, gridP, signFlipTest } from "./signflip.js";

/**
 * Independent reference: walk every one of the 2^m sign assignments and count the sums whose
 * absolute value reaches the observed one. Deliberately naive — no zero factoring, no symmetry,
 * no grid — with an absolute tie tolerance far below any gap between distinct sums in these tests.
 */
function bruteForceP(deltas: readonly number[]): number {
  const m = deltas.length;
  const observed = Math.abs(deltas.reduce((sum, value) => sum + value, 0));
  let extreme = 0;
  for (let mask = 0; mask < 2 ** m; mask++) {
    let sum = 0;
    for (let index = 0; index < m; index++) {
      const magnitude = Math.abs(deltas[index] as number);
      sum += (mask >> index) & 1 ? magnitude : -magnitude;
    }
    if (Math.abs(sum) >= observed - 1e-7) extreme++;
  }
  return extreme / 2 ** m;
}

/** A tiny linear congruential generator, independent of the library's xoshiro. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4_294_967_296;
  };
}

function integerBetween(next: () => number, low: number, high: number): number {
  return low + Math.floor(next() * (high - low + 1));
}

describe("signFlipTest: values worked out by hand", () => {
  it("[10, -5, 20, 15, 5] gives 6/32", () => {
    // Magnitudes 10, 5, 20, 15, 5 (total 55), observed sum 45. Flipping a set F of magnitudes
    // gives T = 55 − 2·ΣF, so |T| ≥ 45 ⇔ ΣF ≤ 5 or ΣF ≥ 50. ΣF ≤ 5: {}, {5}, {5'} → 3 sets, and
    // by complement 3 more with ΣF ≥ 50. p = 6/32 = 0.1875.
    const result = signFlipTest([10, -5, 20, 15, 5]);
    expect(result.p).toBe(6 / 32);
    expect(result.method).toBe("exact");
  });

  it("factors zeros out: [10, -5, 20, 15, 5, 0, 25] gives 6/64", () => {
    // Non-zero magnitudes total 80, observed 70: ΣF ≤ 5 → {}, {5}, {5'}; doubled: 6/64. With the
    // zero included, each of the 2^7 assignments pairs up with its zero-flip twin: 12/128.
    expect(signFlipTest([10, -5, 20, 15, 5, 0, 25]).p).toBe(6 / 64);
  });

  it("[1, 2, 3] gives 2/8: only the observed and the all-negative assignment reach |6|", () => {
    expect(signFlipTest([1, 2, 3]).p).toBe(2 / 8);
  });

  it("[3, -1, -2] has sum 0, so every assignment counts: p = 1", () => {
    expect(signFlipTest([3, -1, -2]).p).toBe(1);
  });

  it("[4, 1, 1, -1]: observed 5 of total 7; ΣF ≤ 1 → {}, {1}, {1'}, {1''} → 8/16", () => {
    expect(signFlipTest([4, 1, 1, -1]).p).toBe(8 / 16);
  });
});

describe("signFlipTest: edge cases", () => {
  it("all zeros give p = 1", () => {
    expect(signFlipTest([0, 0, 0, 0]).p).toBe(1);
  });

  it("a single delta gives p = 1 (both assignments have the same |sum|)", () => {
    expect(signFlipTest([25]).p).toBe(1);
    expect(signFlipTest([-3.7]).p).toBe(1);
  });

  it("identical non-zero deltas give p = 2/2^m", () => {
    for (const m of [2, 5, 10, 16]) {
      expect(signFlipTest(Array(m).fill(12.5)).p).toBe(2 / 2 ** m);
      expect(signFlipTest(Array(m).fill(-7)).p).toBe(2 / 2 ** m);
    }
    // Beyond the enumeration limit the grid method must give the same exact value.
    const large = signFlipTest(Array(60).fill(100 / 3));
    expect(large.method).toBe("dp");
    expect(large.p).toBeCloseTo(2 / 2 ** 60, 30);
    expect(large.p / (2 / 2 ** 60)).toBeCloseTo(1, 12);
  });

  it("counts floating-point ties as ties", () => {
    // 0.1 + 0.2 − 0.3 is 5.55e-17 in floating point but 0 on paper: every assignment with sum 0
    // (and all others) must count, so p = 1.
    expect(signFlipTest([0.1, 0.2, -0.3]).p).toBe(1);
    // 100·(0/7 − 1/7) and 100·(4/7 − 5/7) are both −100/7 on paper but differ in the last bit,
    // so the observed sum below is 0 on paper and a rounding residue in floating point: p = 1.
    const first = 100 * (0 / 7 - 1 / 7);
    const second = 100 * (4 / 7 - 5 / 7);
    expect(first).not.toBe(second);
    expect(first - second).not.toBe(0);
    expect(signFlipTest([first, -second]).p).toBe(1);
    // Add 200/7 = 2a (a = 100/7). Deltas −a, +a, 2a: observed sum 2a. The 8 signed sums of the
    // magnitudes a, a, 2a are: +++ 4a, ++− 0, +−+ 2a, −++ 2a, +−− −2a, −+− −2a, −−+ 0, −−− −4a.
    // |T| ≥ 2a for 6 of 8 — but only if the rounded ±2a sums count as ties with the observed one.
    expect(signFlipTest([first, -second, 200 / 7]).p).toBe(6 / 8);
  });

  it("rejects empty, NaN, infinite and non-number input with an InputError", () => {
    expect(() => signFlipTest([])).toThrow(InputError);
    expect(() => signFlipTest([])).toThrow(/empty/);
    expect(() => signFlipTest([1, Number.NaN])).toThrow(/item 1 is NaN/);
    expect(() => signFlipTest([Number.POSITIVE_INFINITY])).toThrow(/Infinity/);
    expect(() => signFlipTest(["3" as unknown as number])).toThrow(/item 0 is "3"/);
    expect(() => signFlipTest(null as unknown as number[])).toThrow(InputError);
  });

  it("refuses a forced method that does not apply", () => {
    expect(() => signFlipTest([1, Math.PI, Math.E], { method: "dp" })).toThrow(/common unit/);
    expect(() => signFlipTest(Array(41).fill(1), { method: "exact" })).toThrow(/too many/);
  });
});

describe("signFlipTest agrees with brute-force enumeration to 1e-12", () => {
  it("on random real-valued deltas, m ≤ 16", () => {
    const next = lcg(12345);
    for (let trial = 0; trial < 40; trial++) {
      const m = integerBetween(next, 1, 16);
      const deltas = Array.from({ length: m }, () => (next() - 0.35) * 40);
      const result = signFlipTest(deltas);
      expect(result.method).toBe("exact");
      expect(Math.abs(result.p - bruteForceP(deltas))).toBeLessThan(1e-12);
    }
  });

  it("on pass-ratio deltas 100·(a/12 − b/12) with ties and zeros, m ≤ 16", () => {
    const next = lcg(777);
    for (let trial = 0; trial < 40; trial++) {
      const m = integerBetween(next, 1, 16);
      const deltas = Array.from({ length: m }, () => {
        const a = integerBetween(next, 0, 12);
        // Bias towards equal outcomes so zeros are common, as in real evaluations.
        const b = next() < 0.3 ? a : integerBetween(next, 0, 12);
        return 100 * (a / 12 - b / 12);
      });
      const result = signFlipTest(deltas);
      expect(Math.abs(result.p - bruteForceP(deltas))).toBeLessThan(1e-12);
    }
  });

  it("on deltas mixing denominators 7, 10 and 12", () => {
    const next = lcg(99);
    for (let trial = 0; trial < 20; trial++) {
      const m = integerBetween(next, 8, 16);
      const deltas = Array.from({ length: m }, () => {
        const denominator = [7, 10, 12][integerBetween(next, 0, 2)] as number;
        return (
          100 *
          ((integerBetween(next, 0, denominator) - integerBetween(next, 0, denominator)) /
            denominator)
        );
      });
      expect(Math.abs(signFlipTest(deltas).p - bruteForceP(deltas))).toBeLessThan(1e-12);
      expect(Math.abs(signFlipTest(deltas, { method: "dp" }).p - bruteForceP(deltas))).toBeLessThan(
        1e-12,
      );
    }
  });
});

describe("dynamic programming over the grid", () => {
  it("matches brute force for m = 16 … 20 on 1/16-grid deltas", () => {
    const next = lcg(2026);
    for (let m = 16; m <= 20; m++) {
      const deltas = Array.from({ length: m }, () => (100 * integerBetween(next, -16, 16)) / 16);
      const dp = signFlipTest(deltas, { method: "dp" });
      expect(dp.method).toBe("dp");
      expect(Math.abs(dp.p - bruteForceP(deltas))).toBeLessThan(1e-12);
    }
  });

  it("matches enumeration for m = 16 … 20 on 1/12-grid deltas with a shifted mean", () => {
    const next = lcg(31337);
    for (let m = 16; m <= 20; m++) {
      for (let trial = 0; trial < 5; trial++) {
        const deltas = Array.from({ length: m }, () => (100 * integerBetween(next, -6, 12)) / 12);
        const dp = signFlipTest(deltas, { method: "dp" });
        const enumerated = signFlipTest(deltas, { method: "exact" });
        expect(Math.abs(dp.p - enumerated.p)).toBeLessThan(1e-12);
      }
    }
  });

  it("is chosen automatically above the enumeration limit", () => {
    const deltas = Array.from({ length: 100 }, (_, index) => (100 * ((index % 9) - 3)) / 16);
    expect(signFlipTest(deltas).method).toBe("dp");
  });

  it("agrees with the exact binomial value for ±1 deltas", () => {
    // With m equal magnitudes and k positive, T = 2·(#positive) − m. For m = 30, observed 20
    // positive: |T| ≥ 10 ⇔ #positive ≤ 10 or ≥ 20, p = 2·Σ_{j≤10} C(30, j)/2^30.
    const deltas = [...Array(20).fill(1), ...Array(10).fill(-1)];
    let tail = 0;
    let binomial = 1;
    for (let j = 0; j <= 10; j++) {
      tail += binomial;
      binomial = (binomial * (30 - j)) / (j + 1);
    }
    const expected = (2 * tail) / 2 ** 30;
    const result = signFlipTest(deltas);
    expect(result.method).toBe("dp");
    expect(Math.abs(result.p - expected)).toBeLessThan(1e-15);
  });

  it("gridP on small integer multiples matches a hand count", () => {
    // Multiples 1, 2, 3; the signed sums of the 8 assignments are: +++ 6, −++ 4, +−+ 2,
    // ++− 0, −−+ 0, −+− −2, +−− −4, −−− −6. |T| ≥ 4 for 4 of 8, |T| ≥ 6 for 2 of 8.
    expect(gridP([1, 2, 3], 4)).toBe(0.5);
    expect(gridP([1, 2, 3], 0)).toBe(1);
    expect(gridP([1, 2, 3], 6)).toBe(0.25);
  });

  it("finds the unit of pass-ratio deltas", () => {
    const grid = findGrid([100 / 3, 200 / 3, 25, 100 * (7 / 12 - 5 / 12)]);
    expect(grid).toBeDefined();
    // lcm of thirds and quarters in points: 100/12.
    expect(grid?.unit).toBeCloseTo(100 / 12, 12);
    expect(grid?.multiples).toEqual([4, 8, 3, 2]);
  });

  it("rejects magnitudes with no small common unit", () => {
    expect(findGrid([1, Math.PI, Math.E, Math.SQRT2])).toBeUndefined();
  });
});

describe("guaranteed bounds beyond enumeration (dp-bounds)", () => {
  /** 1 for the i of [−1, 1, 1, −1, …]·√(i + 2): no grid, every magnitude irrational. */
  const roots = (m: number) =>
    Array.from({ length: m }, (_, index) => (index % 3 === 0 ? -1 : 1) * Math.sqrt(index + 2));

  it("brackets the brute-force p on real-valued deltas, even on a coarse grid", () => {
    const next = lcg(99);
    for (let trial = 0; trial < 30; trial++) {
      const m = integerBetween(next, 1, 14);
      const deltas = Array.from({ length: m }, () => (next() - 0.35) * 20);
      const exact = bruteForceP(deltas);
      for (const boundWork of [50, 5_000, 500_000]) {
        const result = signFlipTest(deltas, { method: "dp-bounds", boundWork });
        expect(result.method).toBe("dp-bounds");
        expect(result.pLower as number).toBeLessThanOrEqual(exact + 1e-12);
        expect(result.pUpper as number).toBeGreaterThanOrEqual(exact - 1e-12);
        expect(result.p).toBe(result.pUpper);
        expect(result.error).toBeCloseTo((result.pUpper as number) - (result.pLower as number), 15);
      }
    }
  });

  it("brackets the meet-in-the-middle p for m = 30 … 40 and narrows with more work", () => {
    for (const m of [30, 35, 40]) {
      const deltas = roots(m);
      const exact = signFlipTest(deltas, { method: "exact" }).p;
      const coarse = signFlipTest(deltas, { method: "dp-bounds", boundWork: 1e5 });
      const fine = signFlipTest(deltas, { method: "dp-bounds", boundWork: 1e7 });
      for (const result of [coarse, fine]) {
        expect(result.pLower as number).toBeLessThanOrEqual(exact);
        expect(result.pUpper as number).toBeGreaterThanOrEqual(exact);
      }
      expect(fine.error as number).toBeLessThan(coarse.error as number);
    }
    // Three exact meet-in-the-middle tests up to m = 40 and 10^7-step bounds: seconds of CPU,
    // 33 s at load 37 with two busy loops.
  }, 120_000);

  it("is chosen automatically for m' > 40 off-grid, and brackets an independent exact count", () => {
    // Exact counts computed by hand, once, with a NumPy meet-in-the-middle script (not
    // skillsmith's code) over the same deltas: m = 44 → 641 750 223 236 of 2^44 assignments,
    // m = 48 → 5 655 881 895 434 of 2^48.
    const independent: [number, number][] = [
      [44, 641_750_223_236 / 2 ** 44],
      [48, 5_655_881_895_434 / 2 ** 48],
    ];
    for (const [m, exact] of independent) {
      const result = signFlipTest(roots(m));
      expect(result.method).toBe("dp-bounds");
      expect(result.pLower as number).toBeLessThanOrEqual(exact);
      expect(result.pUpper as number).toBeGreaterThanOrEqual(exact);
      // The default work makes the bracket narrow enough to be a result, not a range.
      expect(result.error as number).toBeLessThan(1e-4);
    }
  });

  it("refines a bracket that contains the verdict's alpha until it does not", () => {
    const deltas = roots(48);
    const coarse = signFlipTest(deltas, { boundWork: 20_000 });
    const alpha = ((coarse.pLower as number) + (coarse.pUpper as number)) / 2;
    expect(coarse.pLower as number).toBeLessThan(alpha);
    const refined = signFlipTest(deltas, { boundWork: 20_000, decisionLevel: alpha });
    expect(refined.error as number).toBeLessThan(coarse.error as number);
    expect(alpha < (refined.pLower as number) || alpha > (refined.pUpper as number)).toBe(true);
    expect(refined.pLower as number).toBeLessThanOrEqual(5_655_881_895_434 / 2 ** 48);
    expect(refined.pUpper as number).toBeGreaterThanOrEqual(5_655_881_895_434 / 2 ** 48);
  });

  it("reports the exact methods' error as 0 and Monte Carlo's as a standard error only", () => {
    expect(signFlipTest([10, -5, 20, 15, 5]).error).toBe(0);
    expect(signFlipTest(Array.from({ length: 30 }, (_, i) => (i % 4) * 25 - 30)).error).toBe(0);
    const estimate = signFlipTest(roots(20), { method: "monte-carlo", draws: 2_000 });
    expect(estimate.error).toBeUndefined();
    expect(estimate.standardError).toBeGreaterThan(0);
  });
});

describe("Monte Carlo, when asked for", () => {
  it("is reproducible under its seed and reports (extreme + 1)/(draws + 1)", () => {
    const next = lcg(4242);
    const deltas = Array.from(
      { length: 45 },
      (_, index) => (index % 2 === 0 ? Math.SQRT2 : Math.PI) * (next() * 10 - 4.5),
    );
    const result = signFlipTest(deltas, { method: "monte-carlo", draws: 20_000 });
    expect(result.method).toBe("monte-carlo");
    expect(result.draws).toBe(20_000);
    expect(result.standardError).toBeGreaterThan(0);
    // Reported as (extreme + 1)/(draws + 1), so p·(draws + 1) is a whole number of draws.
    const extremePlusOne = result.p * 20_001;
    expect(Math.abs(extremePlusOne - Math.round(extremePlusOne))).toBeLessThan(1e-6);
    // Same seed, same estimate; the result is reproducible.
    expect(signFlipTest(deltas, { method: "monte-carlo", draws: 20_000 }).p).toBe(result.p);
  });

  it("estimates a known exact value within 5 standard errors", () => {
    const next = lcg(8);
    const deltas = Array.from({ length: 16 }, () => (next() - 0.3) * 7);
    const exact = bruteForceP(deltas);
    const estimate = signFlipTest(deltas, { method: "monte-carlo", draws: 50_000, seed: 3 });
    expect(estimate.standardError).toBeDefined();
    expect(Math.abs(estimate.p - exact)).toBeLessThan(
      5 * (estimate.standardError as number) + 1e-4,
    );
  });
});
