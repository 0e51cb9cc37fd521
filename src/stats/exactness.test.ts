/**
 * The cases of issue 31, each against an exact computation written here: big-integer counts of
 * sign assignments, never a figure taken from the code under test.
 */
import { describe, expect, it } from "vitest";
import { createSeededRandom } from "./random.js";
import { signFlipTest } from "./signflip.js";
import { summarizeDeltas } from "./summary.js";
import { wilcoxonSignedRank } from "./wilcoxon.js";

/** Exact counts of W = Σ_{εᵢ=+1} kᵢ over all 2^m sign assignments of positive integers kᵢ. */
function exactCounts(multiples: readonly number[]): bigint[] {
  const total = multiples.reduce((sum, value) => sum + value, 0);
  const counts = new Array<bigint>(total + 1).fill(0n);
  counts[0] = 1n;
  let reach = 0;
  for (const step of multiples) {
    for (let sum = reach + step; sum >= step; sum--)
      counts[sum] = (counts[sum] as bigint) + (counts[sum - step] as bigint);
    reach += step;
  }
  return counts;
}

/** P(|2W − K| ≥ a) from exact counts, rounded to a float only at the end. */
function tailAtLeast(counts: readonly bigint[], a: number): number {
  const total = counts.length - 1;
  let count = 0n;
  let all = 0n;
  counts.forEach((value, w) => {
    all += value;
    if (Math.abs(2 * w - total) >= a) count += value;
  });
  const scale = 10n ** 15n;
  return Number((count * scale) / all) / 1e15;
}

/**
 * 1 000 deltas dᵢ = sᵢ·(kᵢ + eᵢ): integers kᵢ in 5…25 with signs chosen so that Σsᵢkᵢ = 1025,
 * plus perturbations 0 ≤ eᵢ < 10⁻⁴ that take them off every grid. For any assignment the sum is
 * A + B with A = Σεᵢkᵢ an integer of fixed parity and |B| ≤ Σeᵢ < 0.1, so an assignment is at
 * least as extreme as the observed one when |A| ≥ 1027, never when |A| ≤ 1023, and perhaps
 * when |A| = 1025: the exact p lies in [P(|A| ≥ 1027), P(|A| ≥ 1025)], both counted exactly.
 */
function nearAlphaCase(): { deltas: number[]; multiples: number[] } {
  const random = createSeededRandom(3);
  const multiples = Array.from({ length: 1000 }, () => 5 + random.nextBelow(21));
  const target = 1025;
  const positive = multiples.map(() => false);
  let sum = -multiples.reduce((total, value) => total + value, 0);
  multiples.forEach((value, index) => {
    if (sum + 2 * value <= target) {
      positive[index] = true;
      sum += 2 * value;
    }
  });
  const gap = (target - sum) / 2;
  if (gap > 0) {
    const up = multiples.findIndex(
      (value, index) =>
        !positive[index] && multiples.some((other, j) => positive[j] && value - other === gap),
    );
    const down = multiples.findIndex(
      (other, j) => positive[j] && (multiples[up] as number) - other === gap,
    );
    positive[up] = true;
    positive[down] = false;
    sum += 2 * gap;
  }
  expect(sum).toBe(target);
  const deltas = multiples.map(
    (value, index) =>
      (positive[index] ? 1 : -1) * (value + 1e-4 * ((index * 0.6180339887498949) % 1)),
  );
  return { deltas, multiples };
}

describe("a p near α at m = 1 000 off any grid (issue 31, item 1)", () => {
  const { deltas, multiples } = nearAlphaCase();
  const counts = exactCounts(multiples);
  const exactLower = tailAtLeast(counts, 1027);
  const exactUpper = tailAtLeast(counts, 1025);

  it("the exact p lies in [0.048, 0.049] (big-integer count)", () => {
    expect(exactLower).toBeGreaterThan(0.048);
    expect(exactUpper).toBeLessThan(0.049);
  });

  it("is Golden or undecided, never Ineffective, and its bracket holds the exact p", () => {
    const summary = summarizeDeltas(deltas, 0.05, { bootstrap: { resamples: 100 } });
    expect(summary.signflip.method).toBe("dp-bounds");
    expect(["golden", "undecided"]).toContain(summary.class);
    expect(summary.signflip.pLower as number).toBeLessThanOrEqual(exactUpper);
    expect(summary.signflip.pUpper as number).toBeGreaterThanOrEqual(exactLower);
    if (summary.class === "golden") expect(summary.signflip.pUpper as number).toBeLessThan(0.05);
  }, 60_000);

  it("is undecided, not a class, when the work allowed cannot take α out of the bracket", () => {
    const limited = summarizeDeltas(deltas, 0.05, {
      signFlip: { boundWork: 1e5, maxGridWork: 1e5 },
      bootstrap: { resamples: 100 },
    });
    expect(limited.signflip.pLower as number).toBeLessThan(0.05);
    expect(limited.signflip.pUpper as number).toBeGreaterThanOrEqual(0.05);
    expect(limited.signflip.decided).toBe(false);
    expect(limited.class).toBe("undecided");
  });

  it("an undecided bracket on the other side of α is Ineffective only when pLower ≥ α", () => {
    // α = 0.04 is below the whole exact bracket, so the decided answer is Ineffective.
    const summary = summarizeDeltas(deltas, 0.04, { bootstrap: { resamples: 100 } });
    expect(summary.signflip.pLower as number).toBeGreaterThanOrEqual(0.04);
    expect(summary.class).toBe("ineffective");
  }, 60_000);
});

describe("zeros and ties within rounding only (issue 31, item 3)", () => {
  it("100 and 1e-8 are two non-zero deltas: p = 1/2 by exact enumeration", () => {
    // In units of 10⁻⁸ the deltas are the integers 10¹⁰ and 1; of the 4 assignments, those with
    // |±10¹⁰ ± 1| ≥ 10¹⁰ + 1 are the 2 with equal signs.
    const units = [10n ** 10n, 1n] as const;
    const observed = units[0] + units[1];
    let extreme = 0;
    for (const first of [1n, -1n])
      for (const second of [1n, -1n]) {
        const sum = first * (units[0] as bigint) + second * (units[1] as bigint);
        if ((sum < 0n ? -sum : sum) >= observed) extreme++;
      }
    expect(extreme / 4).toBe(0.5);
    expect(signFlipTest([100, 1e-8]).p).toBe(extreme / 4);
    const summary = summarizeDeltas([100, 1e-8], 0.05, { bootstrap: { resamples: 100 } });
    expect(summary.signflip.p).toBe(0.5);
    expect(summary.signflip.nonZero).toBe(2);
  });

  it("counts zeros one way in the summary, the sign-flip test and Wilcoxon", () => {
    const deltas = [100, 1e-8, 0, -0, 25, -3];
    const summary = summarizeDeltas(deltas, 0.05, { bootstrap: { resamples: 100 } });
    const exactZeros = deltas.filter((value) => value === 0).length;
    expect(summary.zero).toBe(exactZeros);
    expect(summary.wilcoxon.zeros).toBe(exactZeros);
    expect(summary.signflip.nonZero).toBe(deltas.length - exactZeros);
    expect(wilcoxonSignedRank(deltas).n).toBe(deltas.length - exactZeros);
    expect(summary.positive + summary.negative + summary.zero).toBe(deltas.length);
  });

  it("still treats sums equal on paper as ties", () => {
    // 100·(7/12 − 5/12), 100·(3/12 − 1/12) and 100·(2/12) are all 50/3 on paper: in that unit
    // the deltas are 1, 1, −1 and 3 (the last is 50). Count, in integers, the assignments
    // with |Σ| ≥ |1 + 1 − 1 + 3| = 4.
    const units = [1, 1, -1, 3];
    const observed = Math.abs(units.reduce((sum, value) => sum + value, 0));
    let extreme = 0;
    for (let mask = 0; mask < 16; mask++) {
      const sum = units.reduce(
        (total, value, index) => total + ((mask >> index) & 1 ? -1 : 1) * Math.abs(value),
        0,
      );
      if (Math.abs(sum) >= observed) extreme++;
    }
    const deltas = [100 * (7 / 12 - 5 / 12), 100 * (3 / 12 - 1 / 12), -100 * (2 / 12), 50];
    expect(extreme / 16).toBe(0.5);
    expect(signFlipTest(deltas).p).toBe(extreme / 16);
  });
});
