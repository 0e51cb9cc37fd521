import { describe, expect, it } from "vitest";
import {
  pairedBinomialPower,
  requirementsForPairedBinomialPower,
  requirementsForPower,
  signFlipPower,
} from "./power.js";
import { normalCdf } from "./special.js";

describe("sign-flip power under Normal(δ, σ²) requirement deltas", () => {
  it("with σ = 0 is 1 exactly when 2^(1−m) < α, and 0 otherwise", () => {
    for (const m of [4, 5, 6, 10]) {
      const estimate = signFlipPower({ requirements: m, effect: 10, sd: 0 }, { draws: 50 });
      expect(estimate.power).toBe(2 ** (1 - m) < 0.05 ? 1 : 0);
    }
  });

  it("with δ = 0 is the exact size of the test with continuous deltas (m = 10: 50/1024)", () => {
    // Continuous deltas have no ties: p = 2c/1024 with c the assignments at least as extreme,
    // so p < 0.05 ⇔ c ≤ 25 and the size is 2·25/1024 = 0.048828125, worked out by hand.
    const estimate = signFlipPower({ requirements: 10, effect: 0, sd: 20 }, { draws: 6000 });
    expect(estimate.method).toBe("exact");
    expect(Math.abs(estimate.power - 50 / 1024)).toBeLessThan(4 * estimate.standardError + 0.002);
  });

  it("beyond 20 requirements agrees with the large-sample power of the z test", () => {
    // P(Σd ≥ z·√Σd²) with Σd² ≈ m(σ² + δ²): Φ((mδ − z√(m(σ²+δ²))) / (σ√m)). An approximation
    // of the approximation, so the tolerance is loose; the exact region is checked above.
    for (const [m, effect, sd] of [
      [40, 10, 25],
      [80, 5, 20],
    ] as const) {
      const estimate = signFlipPower({ requirements: m, effect, sd }, { draws: 4000 });
      expect(estimate.method).toBe("normal-approximation");
      const z = 1.959963984540054;
      const expected = normalCdf(
        (m * effect - z * Math.sqrt(m * (sd * sd + effect * effect))) / (sd * Math.sqrt(m)),
      );
      expect(Math.abs(estimate.power - expected)).toBeLessThan(0.05);
    }
  });

  it("is reproducible: the same seed gives the same estimate, another seed a close one", () => {
    const one = signFlipPower({ requirements: 12, effect: 15, sd: 25 }, { draws: 1000, seed: 4 });
    const again = signFlipPower({ requirements: 12, effect: 15, sd: 25 }, { draws: 1000, seed: 4 });
    const other = signFlipPower({ requirements: 12, effect: 15, sd: 25 }, { draws: 1000, seed: 5 });
    expect(again).toEqual(one);
    expect(Math.abs(other.power - one.power)).toBeLessThan(0.08);
  });
});

describe("requirements for a target power", () => {
  it("finds the smallest m meeting the target among those it evaluated, and fails above", () => {
    const found = requirementsForPower({ effect: 20, sd: 25 }, { draws: 800 });
    const m = found.requirements as number;
    expect(found.estimate.power).toBeGreaterThanOrEqual(0.8);
    expect(
      signFlipPower({ requirements: m - 1, effect: 20, sd: 25 }, { draws: 800 }).power,
    ).toBeLessThan(0.8);
    // The one-sample t-test needs about (z_{0.975} + z_{0.8})²·σ²/δ² + 2 ≈ 14.3 requirements
    // here (textbook normal formula with a small-sample correction); the sign-flip test is close.
    expect(m).toBeGreaterThanOrEqual(11);
    expect(m).toBeLessThanOrEqual(18);
    expect(
      requirementsForPower({ effect: 1, sd: 50, maxRequirements: 200 }, { draws: 300 })
        .requirements,
    ).toBeNull();
    expect(() => requirementsForPower({ effect: 0, sd: 10 })).toThrow(/cannot be detected/);
  });
});

describe("power under the paired binomial model (issue 31, item 7)", () => {
  it("matches the exact power of a design small enough to count by hand", () => {
    // One check per arm, baseline 0.5, effect +50 points: the assisted arm always passes, the
    // unassisted one with probability 1/2, so each delta is +100 or 0 and the N non-zero deltas
    // (N ~ Binomial(8, 1/2)) are all positive: p = 2/2^N < 0.05 exactly when N ≥ 6.
    const choose = (n: number, k: number): number =>
      k === 0 ? 1 : (choose(n, k - 1) * (n - k + 1)) / k;
    const exact = (choose(8, 6) + choose(8, 7) + choose(8, 8)) / 256;
    const estimate = pairedBinomialPower(
      { requirements: 8, effect: 50, baseline: [0.5], trials: 1 },
      { draws: 20_000, seed: 3 },
    );
    expect(estimate.method).toBe("paired-binomial");
    expect(Math.abs(estimate.power - exact)).toBeLessThan(4 * estimate.standardError);
  });

  it("gives the same requirements needed for every seed at the default draws", () => {
    const baseline = [0.2, 0.35, 0.5, 0.5, 0.65, 0.8, 0.9];
    const found = [1, 2, 3, 4].map(
      (seed) =>
        requirementsForPairedBinomialPower(
          { effect: 30, baseline, trials: 4, targetPower: 0.8 },
          { seed },
        ).requirements,
    );
    expect(new Set(found).size).toBe(1);
    expect(found[0]).toBeGreaterThan(5);
    // Four searches at the default 20 000 draws (the whole file is about 3 s of CPU): 141 s of
    // wall time at load 23 with two busy loops beside it, where it failed at 60 s.
  }, 300_000);
});
