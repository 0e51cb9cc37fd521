import { describe, expect, it } from "vitest";
import {
  describeShiftInterval,
  detectableEffect,
  minimumSignFlipP,
  shiftConfidenceInterval,
  signFlipSize,
} from "./detectable.js";
import { createSeededRandom } from "./random.js";
import { signFlipTest } from "./signflip.js";

/**
 * Hartigan (1969): for the sign-flip test of the sum, θ is rejected below the mean exactly when
 * fewer than α·2^(m−1) − 1 non-empty subsets of the deltas have a mean ≤ θ. So the (1 − α)
 * interval runs from the k-th smallest to the k-th largest of the 2^m − 1 subset means, with
 * k = ⌈α·2^(m−1) − 1⌉ (unbounded when k ≤ 0). Computed here by listing every subset: a route
 * that shares nothing with the bisection under test.
 */
function hartiganInterval(deltas: readonly number[], alpha: number): [number, number] | null {
  const m = deltas.length;
  const k = Math.ceil(alpha * 2 ** (m - 1) - 1);
  if (k <= 0) return null;
  // Subset sums and sizes by doubling (subset `mask` ∪ {bit} sits at mask + 2^bit).
  const sums = new Float64Array(2 ** m);
  const sizes = new Uint8Array(2 ** m);
  for (let bit = 0; bit < m; bit++) {
    const half = 2 ** bit;
    for (let mask = 0; mask < half; mask++) {
      sums[mask + half] = (sums[mask] as number) + (deltas[bit] as number);
      sizes[mask + half] = (sizes[mask] as number) + 1;
    }
  }
  const means = new Float64Array(2 ** m - 1);
  for (let mask = 1; mask < 2 ** m; mask++) {
    means[mask - 1] = (sums[mask] as number) / (sizes[mask] as number);
  }
  means.sort();
  return [means[k - 1] as number, means[means.length - k] as number];
}

/** P(p < α) under the null by brute force: every sign assignment, its own p from signFlipTest. */
function bruteForceSize(deltas: readonly number[], alpha: number): number {
  const m = deltas.length;
  let below = 0;
  for (let mask = 0; mask < 2 ** m; mask++) {
    const flipped = deltas.map((value, bit) => (mask & (1 << bit) ? -value : value));
    if (signFlipTest(flipped, { method: "exact" }).p < alpha) below++;
  }
  return below / 2 ** m;
}

describe("the smallest attainable sign-flip p", () => {
  it("is 2^(1−m′), as counting the all-equal-sign assignments by hand gives", () => {
    expect(minimumSignFlipP(0)).toBe(1);
    expect(minimumSignFlipP(1)).toBe(1);
    expect(minimumSignFlipP(5)).toBe(0.0625);
    expect(minimumSignFlipP(6)).toBe(0.03125);
    // And it is what signFlipTest gives for m′ deltas of one sign, zeros added.
    for (const m of [3, 6, 9]) {
      const deltas = [...Array.from({ length: m }, (_, i) => 10 + i), 0, 0];
      expect(signFlipTest(deltas).p).toBeCloseTo(minimumSignFlipP(m), 12);
    }
  });
});

describe("the exact size of the sign-flip test", () => {
  it("equals the brute-force share of assignments with p < α", () => {
    const cases: number[][] = [
      [10, 0, 0, 20, -10, 0, 30, 10, 0, 0],
      [50, 50, 50, 50, 50, 50, -50],
      [5, 10, 15, 20, 25, 30, 35, 40],
      [12.5, -7.25, 3.125, 40, 40, -40, 9, 1.5, 2.5],
    ];
    for (const deltas of cases) {
      for (const alpha of [0.05, 0.1]) {
        expect(signFlipSize(deltas, alpha)).toBeCloseTo(bruteForceSize(deltas, alpha), 12);
      }
    }
  });

  it("is 0 when no assignment can reach α and never exceeds α", () => {
    expect(signFlipSize([1, 2, 3, 4, 5], 0.05)).toBe(0); // 2^(1−5) = 0.0625 ≥ 0.05
    const random = createSeededRandom(3);
    for (let trial = 0; trial < 30; trial++) {
      const deltas = Array.from(
        { length: 4 + random.nextBelow(9) },
        () => random.nextBelow(21) * 5 - 50,
      );
      const size = signFlipSize(deltas, 0.05) as number;
      expect(size).toBeGreaterThanOrEqual(0);
      expect(size).toBeLessThan(0.05);
    }
  });

  it("uses the integer grid beyond enumeration and agrees with enumeration where both apply", () => {
    // 24 deltas on a grid of 10 points: enumeration would list 2^24 sums.
    const deltas = Array.from({ length: 24 }, (_, i) => ((i * 7) % 5) * 10 - 10);
    const size = signFlipSize(deltas, 0.05);
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(0.05);
    // Independent check of the defining property: draw sign assignments at random and count
    // those whose own p (from signFlipTest) is below α.
    const random = createSeededRandom(11);
    let below = 0;
    const draws = 4000;
    for (let draw = 0; draw < draws; draw++) {
      const flipped = deltas.map((value) => (random.nextBelow(2) === 0 ? value : -value));
      if (signFlipTest(flipped).p < 0.05) below++;
    }
    expect(Math.abs(below / draws - (size as number))).toBeLessThan(4 * Math.sqrt(0.05 / draws));
  });
});

describe("the confidence interval for a uniform effect", () => {
  it("matches Hartigan's subset means on hand-made and random deltas", () => {
    const cases: number[][] = [
      [10, 0, 0, 20, -10, 0, 30, 10, 0, 0],
      [40, 40, 40, 40, 40, 40, 40],
      [-20, 5, 12.5, 33, -7, 0, 18, 25, -3],
      [100, -100, 50, 0, 0, 0, 0, 0, 0, 0, 10, 20],
    ];
    const random = createSeededRandom(5);
    for (let trial = 0; trial < 20; trial++) {
      cases.push(
        Array.from({ length: 6 + random.nextBelow(8) }, () => (random.nextBelow(41) - 20) * 5),
      );
    }
    for (const deltas of cases) {
      for (const alpha of [0.05, 0.1]) {
        const expected = hartiganInterval(deltas, alpha);
        const interval = shiftConfidenceInterval(deltas, alpha);
        if (expected !== null && expected[0] === expected[1]) {
          // Every subset mean is the one value: zero width, which is shown as no interval.
          expect(new Set(deltas).size).toBe(1);
          expect([interval.lower, interval.upper]).toEqual([null, null]);
          expect(interval.none).toMatch(/every delta equals/);
          continue;
        }
        if (expected === null) {
          expect([interval.lower, interval.upper]).toEqual([null, null]);
          continue;
        }
        expect(interval.lower).toBeCloseTo(expected[0], 5);
        expect(interval.upper).toBeCloseTo(expected[1], 5);
        expect(interval.level).toBe(1 - alpha);
      }
    }
  });

  it("is what inverting the test means: just outside, p < α; just inside, p ≥ α", () => {
    const deltas = [10, 0, 0, 20, -10, 0, 30, 10, 0, 0];
    const { lower, upper } = shiftConfidenceInterval(deltas, 0.05);
    const p = (theta: number) => signFlipTest(deltas.map((value) => value - theta)).p;
    expect(p((lower as number) - 0.01)).toBeLessThan(0.05);
    expect(p((lower as number) + 0.01)).toBeGreaterThanOrEqual(0.05);
    expect(p((upper as number) + 0.01)).toBeLessThan(0.05);
    expect(p((upper as number) - 0.01)).toBeGreaterThanOrEqual(0.05);
  });

  it("is unbounded with five requirements at α = 0.05", () => {
    expect(shiftConfidenceInterval([50, 50, 50, 50, 50], 0.05)).toMatchObject({
      lower: null,
      upper: null,
    });
  });

  it("constant deltas give no zero-width interval, and the label never calls one an interval", () => {
    // Hartigan: every subset mean of [50 × 8] is 50, so the inversion is the point [50, 50].
    const constant = shiftConfidenceInterval([50, 50, 50, 50, 50, 50, 50, 50], 0.05);
    expect(hartiganInterval([50, 50, 50, 50, 50, 50, 50, 50], 0.05)).toEqual([50, 50]);
    expect(constant).toMatchObject({ lower: null, upper: null });
    expect(constant.none).toMatch(/every delta equals 50/);
    // All zeros: the same, where the report also says no size could have given a verdict.
    const zeros = detectableEffect(new Array(10).fill(0), 0.05);
    expect(zeros.anyEffectDetectable).toBe(false);
    expect([zeros.interval.lower, zeros.interval.upper]).toEqual([null, null]);
    expect(zeros.interval.none).toMatch(/every delta equals 0/);
  });

  it("labels each interval by its method and coverage: exact up to 20 deltas, Monte Carlo beyond", () => {
    const small = shiftConfidenceInterval([10, 0, 0, 20, -10, 0, 30, 10, 0, 0], 0.05);
    expect(describeShiftInterval(small)).toBe(
      "exact 95% sign-flip interval: test inversion, coverage at least 95% under the uniform-effect model",
    );
    const large = shiftConfidenceInterval(
      Array.from({ length: 21 }, (_, i) => ((i * 13) % 9) * 5 - 15),
      0.05,
    );
    expect(large).toMatchObject({ method: "monte-carlo", draws: 10_000 });
    expect(describeShiftInterval(large)).toMatch(
      /^approximate 95% sign-flip interval: Monte Carlo/,
    );
    expect(describeShiftInterval(large)).not.toMatch(/exact/);
  }, 30_000);

  it("beyond 20 requirements, stays close to Hartigan's ends (seeded sign assignments)", () => {
    const deltas = Array.from({ length: 21 }, (_, i) => ((i * 13) % 9) * 5 - 15);
    const interval = shiftConfidenceInterval(deltas, 0.05);
    expect(interval.method).toBe("monte-carlo");
    const expected = hartiganInterval(deltas, 0.05) as [number, number];
    expect(Math.abs((interval.lower as number) - expected[0])).toBeLessThan(1);
    expect(Math.abs((interval.upper as number) - expected[1])).toBeLessThan(1);
  }, 30_000);
});

describe("detectableEffect", () => {
  it("says an Ineffective profile with five non-zero deltas could not have detected anything", () => {
    const effect = detectableEffect([10, 0, 0, 20, -10, 0, 30, 10, 0, 0], 0.05);
    expect(effect).toMatchObject({
      n: 10,
      nonZero: 5,
      minimumP: 0.0625,
      anyEffectDetectable: false,
      size: 0,
    });
    const expected = hartiganInterval([10, 0, 0, 20, -10, 0, 30, 10, 0, 0], 0.05) as number[];
    expect(effect.shiftToGolden).toBeCloseTo(-(expected[0] as number), 5);
    expect(effect.shiftToHarmful).toBeCloseTo(expected[1] as number, 5);
  });

  it("needs no shift toward the class a profile already has", () => {
    const effect = detectableEffect([30, 40, 20, 50, 40, 30, 60, 20], 0.05);
    expect(signFlipTest([30, 40, 20, 50, 40, 30, 60, 20]).p).toBeLessThan(0.05);
    expect(effect.shiftToGolden).toBe(0);
    expect(effect.shiftToHarmful).toBeGreaterThan(30);
    expect(effect.interval.lower).toBeGreaterThan(0);
  });
});
