import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { wilcoxonSignedRank } from "./wilcoxon.js";

/**
 * Independent reference: mid-ranks by their definition (1 + number of smaller values + half the
 * number of other equal values), then every sign assignment over those rank scores, counting
 * those whose |W+ − total/2| reaches the observed one.
 */
function bruteForceWilcoxon(deltas: readonly number[]): { statistic: number; p: number } {
  const nonZero = deltas.filter((value) => value !== 0);
  const magnitudes = nonZero.map(Math.abs);
  const ranks = magnitudes.map((value) => {
    const smaller = magnitudes.filter((other) => other < value).length;
    const equal = magnitudes.filter((other) => other === value).length;
    return 1 + smaller + (equal - 1) / 2;
  });
  const total = ranks.reduce((sum, rank) => sum + rank, 0);
  const statistic = nonZero.reduce(
    (sum, value, index) => sum + (value > 0 ? (ranks[index] as number) : 0),
    0,
  );
  const observed = Math.abs(statistic - total / 2);
  let extreme = 0;
  for (let mask = 0; mask < 2 ** ranks.length; mask++) {
    let positive = 0;
    ranks.forEach((rank, index) => {
      if ((mask >> index) & 1) positive += rank;
    });
    if (Math.abs(positive - total / 2) >= observed - 1e-9) extreme++;
  }
  return { statistic, p: extreme / 2 ** ranks.length };
}

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4_294_967_296;
  };
}

describe("wilcoxonSignedRank", () => {
  it("computes the example by hand", () => {
    // [10, -5, 20, 15, 5, 0, 25]: drop the zero; |d| = 10, 5, 20, 15, 5, 25 → ranks 3, 1.5, 5, 4,
    // 1.5, 6. W+ = 3 + 5 + 4 + 1.5 + 6 = 19.5 of total 21; W− = 1.5. Doubled scores 6,3,10,8,3,12
    // (total 42); |W+ − 21/2| ≥ 9 ⇔ the negative doubled ranks sum to ≤ 3 or ≥ 39: {}, {3}, {3'}
    // and their complements → 6/64.
    const result = wilcoxonSignedRank([10, -5, 20, 15, 5, 0, 25]);
    expect(result.statistic).toBe(19.5);
    expect(result.p).toBe(6 / 64);
    expect(result).toMatchObject({ method: "exact", zeros: 1, ties: 1, n: 6 });
  });

  it("matches SciPy's exact p without ties", () => {
    // scipy.stats.wilcoxon(v, method="exact").pvalue
    expect(wilcoxonSignedRank([1, 2, 3, 4, -5, 7, -6, 9]).p).toBeCloseTo(0.3828125, 15);
    expect(
      wilcoxonSignedRank([3.1, -0.4, 2.2, 5.9, 1.7, -2.8, 4.4, 0.6, 1.3, -0.9, 2.5, 3.8]).p,
    ).toBeCloseTo(0.0341796875, 15);
  });

  it("matches brute force over mid-rank scores, with ties and zeros", () => {
    const next = lcg(55);
    for (let trial = 0; trial < 40; trial++) {
      const m = 1 + Math.floor(next() * 14);
      // Integer-valued deltas in [−5, 5]: many ties and zeros.
      const deltas = Array.from({ length: m }, () => Math.floor(next() * 11) - 5);
      const expected = bruteForceWilcoxon(deltas);
      const result = wilcoxonSignedRank(deltas);
      expect(result.statistic).toBe(expected.statistic);
      expect(Math.abs(result.p - expected.p)).toBeLessThan(1e-12);
    }
  });

  it("treats deltas equal on paper but not in the last bit as tied", () => {
    const first = 100 * (0 / 7 - 1 / 7);
    const second = 100 * (4 / 7 - 5 / 7);
    expect(first).not.toBe(second);
    const result = wilcoxonSignedRank([first, -second, 50]);
    // Ranks 1.5, 1.5, 3 → one tie group, W+ = 1.5 + 3 = 4.5.
    expect(result.ties).toBe(1);
    expect(result.statistic).toBe(4.5);
  });

  it("returns p = 1 when every delta is zero", () => {
    expect(wilcoxonSignedRank([0, 0, 0])).toMatchObject({ statistic: 0, p: 1, zeros: 3, n: 0 });
  });

  it("uses the tie-corrected normal approximation with continuity correction above 100", () => {
    // scipy.stats.wilcoxon(d, zero_method="wilcox", correction=True, method="approx").pvalue
    // with d = [((i*37) % 23) − 9 for i in 1..150] (6 zeros, many ties); W+ = 6909 by
    // scipy.stats.rankdata on the non-zero |d|.
    const first = Array.from({ length: 150 }, (_, index) => (((index + 1) * 37) % 23) - 9);
    const result = wilcoxonSignedRank(first);
    expect(result.method).toBe("normal");
    expect(result.zeros).toBe(6);
    expect(result.statistic).toBe(6909);
    expect(Math.abs(result.p - 0.0007506770218420147)).toBeLessThan(1e-12);
    // d = [((i*53) % 41) − 17.5 for i in 1..130]
    const second = Array.from({ length: 130 }, (_, index) => (((index + 1) * 53) % 41) - 17.5);
    expect(Math.abs(wilcoxonSignedRank(second).p - 0.02756382550210589)).toBeLessThan(1e-12);
  });

  it("rejects bad input", () => {
    expect(() => wilcoxonSignedRank([])).toThrow(InputError);
    expect(() => wilcoxonSignedRank([1, Number.POSITIVE_INFINITY])).toThrow(/item 1/);
  });
});
