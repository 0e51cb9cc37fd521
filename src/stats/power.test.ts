import { describe, expect, it } from "vitest";
import { requirementsForPower, signFlipPower } from "./power.js";
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
